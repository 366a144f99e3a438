package experiments

import (
	"errors"
	"testing"

	"github.com/seed6eee2ec7/crystalball/emulation"
)

// Episodes open on a property's first violating state (New) and count
// their states under the kind of the event that opened them.
func TestEpisodesByTrigger(t *testing.T) {
	for desc, want := range map[string]string{
		"n3 message randtree.Join from n1": "message randtree.Join",
		"n4 transport-error n12":           "transport-error",
		"n5 timer recovery":                "timer recovery",
		"n6 app randtree.JoinOverlay":      "app randtree.JoinOverlay",
	} {
		if got := trigger(desc); got != want {
			t.Errorf("trigger(%q) = %q, want %q", desc, got, want)
		}
	}
	ep := newEpisodes()
	err := errors.New("x")
	for _, v := range []emulation.Violation{
		{Property: "A", Event: "transport-error n1", Err: err, New: true},
		{Property: "A", Event: "message randtree.Join from n2", Err: err},
		{Property: "B", Event: "message randtree.Join from n2", Err: err, New: true},
		{Property: "A", Event: "timer recovery", Err: err, New: true},
	} {
		ep.violation(v)
	}
	if ep.count != 3 || ep.byTrigger["transport-error"] != 2 || ep.byTrigger["message randtree.Join"] != 1 || ep.byTrigger["timer recovery"] != 1 {
		t.Fatalf("%d episodes, by trigger %v", ep.count, ep.byTrigger)
	}
	if got := triggerText(ep.byTrigger); got != "transport-error=2 message randtree.Join=1 timer recovery=1" {
		t.Fatalf("triggerText = %q", got)
	}
}
