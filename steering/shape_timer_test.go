package steering_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// One bug found along twenty requests is one distinct prediction: a timer
// per request ("done%d") counts without its number in a path's shape.
func TestShapeCountsATimerWithoutItsNumber(t *testing.T) {
	path := func(timer string) []consequence.ActorAction {
		return []consequence.ActorAction{{Kind: consequence.ActTimer, Node: 2, Timer: timer}, {Kind: consequence.ActReset, Node: 1, Silent: true}}
	}
	if a, b := steering.Shape(path("done3")), steering.Shape(path("done17")); a != b || a != "A timer done#; B reset silent" {
		t.Fatalf("shapes %q and %q, want both %q", a, b, "A timer done#; B reset silent")
	}
	if a, b := steering.Shape(path("done3")), steering.Shape(path("retry3")); a == b {
		t.Fatalf("timers of two names share a shape: %q", a)
	}
	var log steering.PredictionLog
	for i := range 20 {
		log.Add(time.Unix(int64(i), 0), 1, &steering.RoundReport{Predictions: []steering.Prediction{{Property: "P", Path: path(fmt.Sprintf("done%d", i))}}})
	}
	if n := len(log.Entries()); n != 1 {
		t.Fatalf("20 predictions of one bug along 20 requests: %d distinct, want 1", n)
	}
}
