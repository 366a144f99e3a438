package chord

import (
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
)

// TestArrivals: a joined node declares two joiners through itself whose
// identifiers lie strictly between it and its successor (anywhere but
// itself when it is alone), the smallest such IDs from ArrivalBase; a
// node that is not joined declares none.
func TestArrivals(t *testing.T) {
	hashed := newState(DefaultOptions())
	hashed.Status, hashed.Bootstrap, hashed.Pred = StatusJoined, 1, 20
	hashed.Successors = ids(40)
	hashed.initFingers(30)
	cases := []struct {
		name string
		s    *State
		want []node.ID
	}{
		// By ID on 64 identifiers ArrivalBase lies at 0: n30's successor
		// n40 leaves 31..39, i.e. ArrivalBase+31 and +32.
		{"by id", sampleState(), []node.ID{ArrivalBase + 31, ArrivalBase + 32}},
		{"alone", func() *State {
			s := newState(byID())
			s.Status, s.Bootstrap, s.Pred = StatusJoined, 30, 30
			s.initFingers(30)
			return s
		}(), []node.ID{ArrivalBase, ArrivalBase + 1}},
		{"joining", func() *State { s := newState(byID()); s.Status = StatusJoining; return s }(), nil},
		{"init", newState(byID()), nil},
	}
	for _, tc := range cases {
		got := tc.s.Arrivals(30)
		if len(got) != len(tc.want) {
			t.Fatalf("%s: %v, want %v", tc.name, got, tc.want)
		}
		for i, a := range got {
			if a.ID != tc.want[i] || len(a.Calls) != 1 || a.Calls[0] != (JoinOverlay{Bootstrap: 30}) {
				t.Errorf("%s: arrival %d is %v %v, want %v joining through n30", tc.name, i, a.ID, a.Calls, tc.want[i])
			}
		}
	}
	// Hashed placement: the two IDs hash between n30 and n40, and none
	// below them does.
	got := hashed.Arrivals(30)
	if len(got) != Arrivals {
		t.Fatalf("hashed: %v", got)
	}
	r := hashed.ring
	in := func(id node.ID) bool { return r.between(r.pos(id), r.pos(30), r.pos(40)) }
	n := 0
	for id := ArrivalBase; id <= got[1].ID; id++ {
		if in(id) {
			if id != got[n].ID {
				t.Fatalf("hashed: %v lies between n30 and n40 but the arrivals are %v", id, got)
			}
			n++
		}
	}
	if n != 2 {
		t.Errorf("hashed: %d of the arrivals lie between n30 and n40", n)
	}
}
