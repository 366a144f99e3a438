package steering

import (
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// TestRoundFaultsFollowTheObserved: a round explores a lasting fault only
// once its node has observed one — with the mean downtime of the crashes
// that came back, the shapes and mean length of the partitions, the mean
// size of the jumps — and with none observed its faults are
// Config.Faults without the lasting ones, as before they existed.
func TestRoundFaultsFollowTheObserved(t *testing.T) {
	c := &Controller{cfg: Config{Faults: DefaultFaults()}}
	plain := DefaultFaults().WithLasting(consequence.Faults{})
	if got := c.roundFaults(); got != plain {
		t.Fatalf("nothing observed: %+v, want %+v", got, plain)
	}
	var r EventRates
	for _, f := range []LastingFault{
		{Kind: consequence.ActCrash, For: 10 * time.Second},
		{Kind: consequence.ActCrash, For: 30 * time.Second},
		{Kind: consequence.ActCrash}, // for good: no downtime to average
		{Kind: consequence.ActPartition, Cut: consequence.CutOneWay, For: 4 * time.Second},
		{Kind: consequence.ActPartition, Cut: consequence.CutIsolate},
		{Kind: consequence.ActClockJump, For: -6 * time.Second},
		{Kind: consequence.ActClockJump, For: 2 * time.Second},
	} {
		r.Lasting.Add(f)
	}
	c.setRates(r)
	want := plain
	want.Crashes, want.Downtime = 1, 20*time.Second
	want.Partitions, want.PartitionKinds, want.PartitionLength = 1, consequence.CutOneWay|consequence.CutIsolate, 4*time.Second
	want.ClockJumps, want.ClockJump = 1, 4*time.Second
	if got := c.roundFaults(); got != want {
		t.Errorf("observed: %+v, want %+v", got, want)
	}
	w := r.WalkWeights()
	for _, k := range []consequence.ActorActionKind{consequence.ActCrash, consequence.ActPartition, consequence.ActClockJump} {
		if w[k] != FaultWeightFloor {
			t.Errorf("walk weight of kind %d: %v, want the floor", k, w[k])
		}
	}
	l := &Layer{}
	l.ObserveFault(LastingFault{Kind: consequence.ActCrash})
	if got := l.Rates().Lasting.Crashes; got != 1 {
		t.Errorf("a layer told of a crash counts %d", got)
	}
}
