package steering

import (
	"cmp"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// DefaultUnseenHold is Config.UnseenHold's default: a minute, the order of
// the leases, election timeouts and retry periods a filter on an unseen
// peer protects (a restarted lease grantor must not grant again before the
// lease its previous incarnation granted has lapsed), and the
// intervention window.
const DefaultUnseenHold = time.Minute

// keepUnseen returns fs, the filters of a round that ran to its end, with
// the filters in force that the round could not judge: those on a
// message or transport error from a peer that is not among members, the
// nodes of the round's snapshot. A round judges the events of its view;
// lifting what it cannot see would let a restarted node, whose first
// rounds see only itself, drop at once the filters its previous
// incarnation made durable for exactly that restart. Each is kept until a
// round whose snapshot holds its peer, or for Config.UnseenHold after a
// round first kept it (core goroutine).
func (l *Layer) keepUnseen(fs []Filter, members []node.ID, now time.Time) []Filter {
	hold := cmp.Or(l.cfg.Controller.UnseenHold, DefaultUnseenHold)
	if hold < 0 {
		l.unseen = nil
		return fs
	}
	var extra []Filter
	kept := map[Filter]time.Time{}
	for _, f := range l.gate.Filters() {
		if !unjudgedFilter(f, members, fs) {
			continue
		}
		since, ok := l.unseen[f]
		if !ok {
			since = now
		}
		if now.Sub(since) < hold {
			extra, kept[f] = append(extra, f), since
		}
	}
	l.unseen = kept
	if extra == nil {
		return fs
	}
	return append(slices.Clone(fs), extra...)
}

// unjudgedFilter reports whether f, a filter in force, is one a round
// over members that installs fs could not judge: on a peer outside
// members, and not among fs.
func unjudgedFilter(f Filter, members []node.ID, fs []Filter) bool {
	return f.From != node.None && !slices.Contains(members, f.From) && !slices.Contains(fs, f)
}
