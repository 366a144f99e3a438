package node

import (
	"slices"
	"testing"
	"time"
)

// ledger keeps Disk across resets (it is Durable) and loses Memory.
type ledger struct {
	Disk   []string
	Memory []string
	// SawAtInit is what Init found on disk: Recover must run before it.
	SawAtInit []string
	Recovers  int
}

func (l *ledger) Init(env Env) { l.SawAtInit = slices.Clone(l.Disk) }
func (l *ledger) HandleMessage(env Env, from ID, m Message) {
	l.Disk = append(l.Disk, m.(note).Text)
	l.Memory = append(l.Memory, m.(note).Text)
}
func (l *ledger) HandleTimer(env Env, name string)      {}
func (l *ledger) HandleApp(env Env, call Message)       {}
func (l *ledger) HandleTransportError(env Env, peer ID) {}
func (l *ledger) Recover(previous Service) {
	p := previous.(*ledger)
	l.Disk = slices.Clone(p.Disk)
	l.Recovers = p.Recovers + 1
}

var _ Durable = (*ledger)(nil)

func newLedgerCore(t *testing.T) *Core {
	t.Helper()
	c, err := NewCore(CoreConfig{ID: 3, Factory: func() Service { return &ledger{} }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDurableServiceKeepsItsDiskAcrossReset(t *testing.T) {
	c := newLedgerCore(t)
	if _, err := c.Step(Event{Kind: EventInit, At: t0}); err != nil {
		t.Fatal(err)
	}
	if got := c.Service().(*ledger).Recovers; got != 0 {
		t.Fatalf("first start called Recover %d times, want 0: there is no previous incarnation", got)
	}
	for _, text := range []string{"a", "b"} {
		if _, err := c.Step(Event{Kind: EventMessage, At: t0, From: 1, Msg: note{text}}); err != nil {
			t.Fatal(err)
		}
	}
	before := c.Service().(*ledger)
	if _, err := c.Step(Event{Kind: EventReset, At: t0.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	after := c.Service().(*ledger)
	if after == before {
		t.Fatal("reset kept the old service value: the core must build a fresh one")
	}
	if !slices.Equal(after.Disk, []string{"a", "b"}) || after.Memory != nil || after.Recovers != 1 {
		t.Fatalf("after reset: disk %q memory %q recovers %d, want disk [a b], no memory, 1 recovery", after.Disk, after.Memory, after.Recovers)
	}
	if !slices.Equal(after.SawAtInit, []string{"a", "b"}) {
		t.Fatalf("Init saw disk %q: Recover must run before Init", after.SawAtInit)
	}
	// The new incarnation appends to its own disk, not to the old value's.
	c.Step(Event{Kind: EventMessage, At: t0.Add(time.Second), From: 1, Msg: note{"c"}})
	if !slices.Equal(before.Disk, []string{"a", "b"}) {
		t.Fatalf("previous incarnation's disk became %q", before.Disk)
	}
	c.Step(Event{Kind: EventReset, At: t0.Add(2 * time.Second)})
	if got := c.Service().(*ledger); !slices.Equal(got.Disk, []string{"a", "b", "c"}) || got.Recovers != 2 {
		t.Fatalf("second reset: disk %q recovers %d", got.Disk, got.Recovers)
	}
}

// A reset stepped on a copy, as the explorer does on every branch, must
// leave the original's state alone.
func TestDurableResetOnACopyLeavesTheOriginal(t *testing.T) {
	c := newLedgerCore(t)
	c.Step(Event{Kind: EventInit, At: t0})
	c.Step(Event{Kind: EventMessage, At: t0, From: 1, Msg: note{"a"}})
	cp, err := c.Copy()
	if err != nil {
		t.Fatal(err)
	}
	cp.Step(Event{Kind: EventReset, At: t0})
	cp.Step(Event{Kind: EventMessage, At: t0, From: 1, Msg: note{"b"}})
	if got := c.Service().(*ledger); !slices.Equal(got.Disk, []string{"a"}) || !slices.Equal(got.Memory, []string{"a"}) || got.Recovers != 0 {
		t.Fatalf("original changed by its copy's reset: %+v", got)
	}
	if got := cp.Service().(*ledger); !slices.Equal(got.Disk, []string{"a", "b"}) || !slices.Equal(got.Memory, []string{"b"}) {
		t.Fatalf("copy after reset: %+v", got)
	}
}
