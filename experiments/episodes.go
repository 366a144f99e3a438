package experiments

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/seed6eee2ec7/crystalball/emulation"
)

// episodes groups an emulated run's violating states into episodes (runs
// of consecutive violating states of one property) and counts the states
// by the kind of event that opened their episode.
type episodes struct {
	open      map[string]string // property → trigger of its open episode
	count     int64
	byTrigger map[string]int64
}

func newEpisodes() *episodes {
	return &episodes{open: map[string]string{}, byTrigger: map[string]int64{}}
}

// violation is an emulation.Config.OnViolation.
func (e *episodes) violation(v emulation.Violation) {
	t, ok := e.open[v.Property]
	if v.New || !ok {
		t = trigger(v.Event)
		e.open[v.Property] = t
		e.count++
	}
	e.byTrigger[t]++
}

// trigger is the kind of the event the emulator names desc: its words
// between the node and the peer ("n3 message randtree.Join from n1" →
// "message randtree.Join", "n3 transport-error n1" → "transport-error").
func trigger(desc string) string {
	words := strings.Fields(desc)
	if len(words) > 0 && isNodeName(words[0]) {
		words = words[1:]
	}
	for i, w := range words {
		if w == "from" || isNodeName(w) {
			return strings.Join(words[:i], " ")
		}
	}
	return strings.Join(words, " ")
}

// isNodeName reports whether w names a node as node.ID.String does.
func isNodeName(w string) bool {
	return len(w) > 1 && w[0] == 'n' && strings.Trim(w[1:], "0123456789") == ""
}

// triggerText renders counts by trigger, largest first.
func triggerText(by map[string]int64) string {
	keys := slices.Collect(maps.Keys(by))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(by[b], by[a]), cmp.Compare(a, b)) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, by[k])
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}
