package node_test

import (
	"errors"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// TestObligationRule pins the one rule every host judges a bounded
// property by: an obligation opens at the first pending state, closes at
// the first state that is not, and is late once it has been open past the
// bound — found when time passes the deadline, which is Since + bound.
func TestObligationRule(t *testing.T) {
	t0 := time.Unix(100, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	const bound = 5 * time.Second
	steps := []struct {
		at      float64
		pending bool
		late    bool // Elapse reports the deadline passed on the way
		open    bool
	}{
		{0, false, false, false},
		{1, true, false, true},  // opens at 1 s
		{4, true, false, true},  // still within the bound
		{6, true, false, true},  // 6 - 1 = 5: at the bound, not past it
		{6.5, true, true, true}, // past: late, once
		{8, true, false, true},  // stays late, reported once
		{9, false, false, false},
		{10, true, false, true}, // a new obligation, its clock from 10 s
		{14, false, false, false},
		{30, false, false, false},
	}
	var o node.Obligation
	for _, s := range steps {
		var late bool
		o, late = o.Elapse(at(s.at), bound)
		if late != s.late {
			t.Errorf("at %vs: Elapse late %v, want %v", s.at, late, s.late)
		}
		if late && !o.Due(bound).Equal(at(6)) {
			t.Errorf("at %vs: due %v, want 6 s", s.at, o.Due(bound).Sub(t0))
		}
		o = o.Observe(at(s.at), s.pending)
		if o.Open != s.open {
			t.Errorf("at %vs: open %v, want %v", s.at, o.Open, s.open)
		}
	}
}

func TestWithinDeclaresABoundedProperty(t *testing.T) {
	quorum := true
	goalErr := errors.New("no leader")
	p := node.Within("Leader", 10*time.Second, func(node.View) bool { return quorum }, func(node.View) error { return goalErr })
	if p.Kind != node.Bounded || p.Bound != 10*time.Second || p.Kind.String() != "bounded" {
		t.Fatalf("Within: %+v", p)
	}
	if pending, err := p.Pending(nil); !pending || err != goalErr {
		t.Errorf("Pending with the precondition: %v %v, want pending with the goal's error", pending, err)
	}
	quorum = false
	if pending, err := p.Pending(nil); pending || err != nil {
		t.Errorf("Pending without the precondition: %v %v, want closed", pending, err)
	}
	e := &node.OverdueError{Property: "Leader", Bound: 10 * time.Second, Since: time.Unix(0, 0), At: time.Unix(12, 0), Goal: goalErr}
	if e.Error() != "not within 10s (open for 12s): no leader" || !errors.Is(e, goalErr) {
		t.Errorf("OverdueError: %q", e.Error())
	}
}

func TestSpecValidatesTheNewKinds(t *testing.T) {
	holds := func(node.View) error { return nil }
	spec := func(p node.Property) node.Spec {
		return node.Spec{Name: "s", New: func() node.Service { return nil }, Properties: []node.Property{p}}
	}
	for _, c := range []struct {
		p  node.Property
		ok bool
	}{
		{node.Within("w", time.Second, nil, holds), true},
		{node.Within("w", 0, nil, holds), false},
		{node.OnHistory("h", func(node.History) error { return nil }), true},
		{node.Property{Name: "h", Kind: node.HistoryKind, Check: holds}, false},
		{node.Property{Name: "a", Kind: node.Safety, Check: holds, Bound: time.Second}, false},
		{node.Property{Name: "x", Kind: node.PropertyKind(9), Check: holds}, false},
	} {
		if err := spec(c.p).Validate(); (err == nil) != c.ok {
			t.Errorf("Validate(%s %v): %v, want ok %v", c.p.Name, c.p.Kind, err, c.ok)
		}
	}
}
