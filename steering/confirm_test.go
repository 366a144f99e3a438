package steering_test

import (
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/steering"
)

// The watch's rule, observation by observation (grace 5 s): a dead end is
// confirmed once its property has failed for the grace since the
// prediction or since it last held, retracted once it holds at or after
// the grace, pending otherwise; each property is watched on its own.
func TestLivenessWatchRule(t *testing.T) {
	at := func(s float64) time.Time { return time.Unix(0, 0).Add(time.Duration(s * float64(time.Second))) }
	type obs struct {
		prop  string
		t     float64
		holds bool
	}
	for _, tc := range []struct {
		name                          string
		predicted                     []obs // predictions, each with its observation
		seen                          []obs
		confirmed, retracted, pending uint64
	}{
		{"fails through the grace", []obs{{"P", 0, true}}, []obs{{"P", 1, false}, {"P", 5.9, false}, {"P", 6, false}}, 1, 0, 0},
		{"failing before the prediction counts from it", []obs{{"P", 10, false}}, []obs{{"P", 14, false}, {"P", 15, false}}, 1, 0, 0},
		{"held within the grace, then failed for it", []obs{{"P", 0, true}}, []obs{{"P", 3, true}, {"P", 4, false}, {"P", 8, false}, {"P", 9, false}}, 1, 0, 0},
		{"held after the grace", []obs{{"P", 0, false}}, []obs{{"P", 4, false}, {"P", 5, true}}, 0, 1, 0},
		{"a failure cut short", []obs{{"P", 0, true}}, []obs{{"P", 1, false}, {"P", 4, true}, {"P", 5, false}, {"P", 7, true}}, 0, 1, 0},
		{"still undecided", []obs{{"P", 0, true}}, []obs{{"P", 2, false}, {"P", 6, false}}, 0, 0, 1},
		{"properties apart", []obs{{"P", 0, true}, {"Q", 1, true}}, []obs{{"P", 2, false}, {"Q", 6, true}, {"P", 7, false}}, 1, 1, 0},
		{"two of one property", []obs{{"P", 0, true}, {"P", 3, false}}, []obs{{"P", 7, false}, {"P", 8, false}}, 2, 0, 0},
	} {
		w, err := steering.NewLivenessWatch(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		// Predictions and observations merge in time order.
		pi, si := 0, 0
		for pi < len(tc.predicted) || si < len(tc.seen) {
			if pi < len(tc.predicted) && (si == len(tc.seen) || tc.predicted[pi].t <= tc.seen[si].t) {
				p := tc.predicted[pi]
				w.Predicted(p.prop, at(p.t), p.holds)
				pi++
				continue
			}
			o := tc.seen[si]
			w.Observe(o.prop, at(o.t), o.holds)
			si++
		}
		c, r, p := w.Counts()
		if c != tc.confirmed || r != tc.retracted || p != tc.pending {
			t.Errorf("%s: %d confirmed, %d retracted, %d pending; want %d, %d, %d", tc.name, c, r, p, tc.confirmed, tc.retracted, tc.pending)
		}
	}
	if _, err := steering.NewLivenessWatch(-time.Second); err == nil {
		t.Error("a negative grace was accepted")
	}
	if w, _ := steering.NewLivenessWatch(0); w.Grace() != steering.DefaultConfirmGrace {
		t.Errorf("grace 0 is %v, want the default", w.Grace())
	}
}
