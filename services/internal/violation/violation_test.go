package violation

import (
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
)

func TestEmptyListHoldsNothing(t *testing.T) {
	var l List
	if err := l.Err(); err != nil || l.Len() != 0 {
		t.Fatalf("empty list: %v, %d", err, l.Len())
	}
	if allocs := testing.AllocsPerRun(100, func() {
		var l List
		_ = l.Err()
	}); allocs != 0 {
		t.Errorf("an empty list allocates %v times", allocs)
	}
}

// TestUnboundedJoinsEveryMessage: the zero value describes every
// violation, joined as strings.Join(messages, "; ") would, an empty
// message included.
func TestUnboundedJoinsEveryMessage(t *testing.T) {
	var l List
	for i := range 6 {
		l.Add("n%d: bad", i)
	}
	l.Add("%s", "")
	want := "n0: bad; n1: bad; n2: bad; n3: bad; n4: bad; n5: bad; "
	if err := l.Err(); err == nil || err.Error() != want || l.Len() != 7 {
		t.Fatalf("got %v (%d), want %q", err, l.Len(), want)
	}
}

// TestBoundedCountsTheRest: a bounded list describes its first violations,
// whether added with Add or piece by piece after Next, and counts the rest.
func TestBoundedCountsTheRest(t *testing.T) {
	l := Bounded(2)
	l.Add("%v: first", node.ID(1))
	if l.Next() {
		l.AppendID(2)
		l.AppendString(": ")
		l.AppendInt(-3)
	}
	l.Add("never described")
	if l.Next() {
		t.Error("Next past the bound")
	}
	want := "n1: first; n2: -3; and 2 more"
	if err := l.Err(); err == nil || err.Error() != want || l.Len() != 4 {
		t.Fatalf("got %v (%d), want %q", err, l.Len(), want)
	}
	// Err does not consume: a second call says the same.
	if err := l.Err(); err.Error() != want {
		t.Fatalf("second Err: %v", err)
	}
}

func TestBoundedRefusesNoBound(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Bounded(0) did not panic")
		}
	}()
	Bounded(0)
}
