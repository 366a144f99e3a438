package bullet

import (
	"slices"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// mapView is a hand-built node.View whose Nodes does not allocate.
type mapView = servicetest.View[*State]

func newView(states map[node.ID]*State) *mapView { return servicetest.NewView(states) }

func mapOf(blocks int, bs ...uint32) []uint64 {
	m := newMap(blocks)
	for _, b := range bs {
		set(m, b)
	}
	return m
}

// pair is sender n1 (blocks 0-5 of 8) serving receiver n2, which has been
// told of 0-3 in two diffs; 4 and 5 are in n1's shadow for n2.
func pair() *mapView {
	o := DefaultOptions()
	o.Blocks = 8
	s := newState(o, nil)
	s.Source, s.Have = 9, mapOf(8, 0, 1, 2, 3, 4, 5)
	s.Receivers = []ReceiverLink{{ID: 2, Shadow: mapOf(8, 4, 5), Told: mapOf(8, 0, 1, 2, 3), Sent: 2}}
	r := newState(o, nil)
	r.Source, r.Have = 9, mapOf(8, 1)
	r.Senders = []SenderLink{{ID: 1, Accepted: true, View: mapOf(8, 0, 1, 2, 3), Received: 2, Asked: []uint32{0}}}
	return newView(map[node.ID]*State{1: s, 2: r})
}

func TestFileMapViewConsistentDoesNotAllocateWhenHolding(t *testing.T) {
	v := pair()
	p := servicetest.Property(t, Properties(), FileMapViewConsistent)
	allocs := testing.AllocsPerRun(100, func() {
		if err := p.Check(v); err != nil {
			t.Fatalf("%v", err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per check, want 0", allocs)
	}
}

func TestFileMapViewConsistent(t *testing.T) {
	p := servicetest.Property(t, Properties(), FileMapViewConsistent)
	tests := []struct {
		name   string
		mutate func(v *mapView)
		want   string // "" when the property holds
	}{
		{"healthy", func(*mapView) {}, ""},
		{"shadow cleared (the bug)", func(v *mapView) { clear(v.States[1].Receivers[0].Shadow) },
			"n1 -> n2: 2 blocks (the first 4) are neither announced to n2 nor in n1's shadow for n2"},
		{"the bug, receiver outside the view", func(v *mapView) {
			clear(v.States[1].Receivers[0].Shadow)
			delete(v.States, 2)
			v.IDs = []node.ID{1}
		}, "n1 -> n2: 2 blocks (the first 4) are neither announced to n2 nor in n1's shadow for n2"},
		{"a diff in flight", func(v *mapView) {
			set(v.States[1].Receivers[0].Told, 4)
			v.States[1].Receivers[0].Shadow = mapOf(8, 5)
			v.States[1].Receivers[0].Sent = 3
		}, ""},
		{"view behind with nothing in flight", func(v *mapView) {
			set(v.States[1].Receivers[0].Told, 4)
			v.States[1].Receivers[0].Shadow = mapOf(8, 5)
		}, "n1 -> n2: n2's view of n1's file map is not what n1 announced"},
		{"view ahead of the sender", func(v *mapView) { set(v.States[2].Senders[0].View, 7) },
			"n1 -> n2: n2's view of n1's file map is not what n1 announced"},
		{"receiver does not hold the sender", func(v *mapView) {
			set(v.States[2].Senders[0].View, 7)
			v.States[2].Senders = nil
		}, ""},
		{"sender not accepted yet", func(v *mapView) {
			set(v.States[2].Senders[0].View, 7)
			v.States[2].Senders[0].Accepted = false
		}, ""},
	}
	for _, tc := range tests {
		v := pair()
		tc.mutate(v)
		err := p.Check(v)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
		}
	}
}

func TestAllBlocks(t *testing.T) {
	p := servicetest.Property(t, Properties(), AllBlocks)
	v := pair()
	v.States[3] = newState(v.States[1].opts, nil)
	v.IDs = append(v.IDs, 3)
	err := p.Check(v)
	if err == nil || err.Error() != "n1: 6/8 blocks; n2: 1/8 blocks; n3: not started" {
		t.Fatalf("AllBlocks = %v", err)
	}
	for _, id := range v.IDs {
		v.States[id].Source, v.States[id].Have = 9, fullMap(8)
	}
	if err := p.Check(v); err != nil {
		t.Fatalf("AllBlocks on complete nodes: %v", err)
	}
}

func TestPropertyKinds(t *testing.T) {
	for _, p := range SafetyProperties() {
		if p.Kind != node.Safety {
			t.Errorf("%s is not safety", p.Name)
		}
	}
	for _, p := range LivenessProperties() {
		if p.Kind != node.Liveness {
			t.Errorf("%s is not liveness", p.Name)
		}
	}
	if err := NewSpec(Options{}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestSummarize(t *testing.T) {
	v := pair()
	s := Summarize(v)
	want := Summary{Nodes: 2, Started: 2, Blocks: 8, MinBlocks: 1, Held: 7, Senders: 1}
	if s != want {
		t.Fatalf("Summarize = %+v, want %+v", s, want)
	}
	if got := s.String(); !strings.HasPrefix(got, "complete 0/2 (longest download 0s), 7/16 blocks held (min 1 of 8), 1 sender links") {
		t.Errorf("String = %q", got)
	}
}

func TestNeighbors(t *testing.T) {
	s := midDownload(64, 2)
	s.Receivers[0].ID = s.Senders[1].ID // a peer both ways counts once
	if got := s.Neighbors(10); !slices.Equal(got, []node.ID{11, 13}) {
		t.Errorf("Neighbors = %v, want [n11 n13]", got)
	}
}

func TestDownloadTime(t *testing.T) {
	v := pair()
	r := v.States[2]
	if _, ok := r.DownloadTime(2); ok {
		t.Fatal("a node still downloading has a download time")
	}
	r.Started, r.Completed, r.Have = 1_000, 61_000_001_000, fullMap(8)
	if d, ok := r.DownloadTime(2); !ok || d.String() != "1m1s" {
		t.Fatalf("DownloadTime = %v, %v; want 1m1s", d, ok)
	}
	if got := Summarize(v).MaxDownload.String(); got != "1m1s" {
		t.Errorf("Summary.MaxDownload = %s", got)
	}
	src := newState(r.opts, nil)
	src.Source, src.Started, src.Completed = 9, 5, 5
	if _, ok := src.DownloadTime(9); ok {
		t.Error("the source has a download time")
	}
}

// TestViolationsBounded: a check describes the first four violations and
// counts the rest.
func TestViolationsBounded(t *testing.T) {
	p := servicetest.Property(t, Properties(), AllBlocks)
	states := map[node.ID]*State{}
	for id := node.ID(1); id <= 6; id++ {
		states[id] = newState(DefaultOptions(), nil)
	}
	err := p.Check(newView(states))
	if err == nil || err.Error() != "n1: not started; n2: not started; n3: not started; n4: not started; and 2 more" {
		t.Fatalf("AllBlocks = %v", err)
	}
}
