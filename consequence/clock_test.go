package consequence_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// leaseSvc is a lease: node 1 holds it from the start until its timer
// "expire" (Lease after the start); node 2 takes it over when its timer
// "takeover" fires (Wait after the start). With Wait > Lease the protocol
// is safe in every run with clocks closer than Wait − Lease; only a
// takeover before the expiry breaks it. Node 1 also arms "renew-check"
// and "late" to pin the order of one node's timers and the clock a firing
// leaves.
type leaseSvc struct {
	Holding bool
	Lease   time.Duration `msgpack:"-"`
	Wait    time.Duration `msgpack:"-"`
}

func (s *leaseSvc) Init(env node.Env) {
	switch env.Self() {
	case 1:
		s.Holding = true
		env.SetTimer("expire", s.Lease)
	case 2:
		env.SetTimer("takeover", s.Wait)
	}
}

func (s *leaseSvc) HandleTimer(env node.Env, name string) {
	switch name {
	case "expire":
		s.Holding = false
	case "takeover":
		s.Holding = true
	}
}

func (s *leaseSvc) HandleMessage(node.Env, node.ID, node.Message) {}
func (s *leaseSvc) HandleApp(node.Env, node.Message)              {}
func (s *leaseSvc) HandleTransportError(node.Env, node.ID)        {}

// leaseProp fails when both nodes hold the lease.
var leaseProp = node.Property{Name: "OneHolder", Kind: node.Safety, Check: func(v node.View) error {
	a, _ := v.Service(1).(*leaseSvc)
	b, _ := v.Service(2).(*leaseSvc)
	if a != nil && b != nil && a.Holding && b.Holding {
		return errors.New("n1 and n2 both hold the lease")
	}
	return nil
}}

func leaseModel(t *testing.T, lease, wait time.Duration, opts consequence.ActorOptions) *consequence.ActorModel {
	t.Helper()
	spec := node.Spec{Name: "lease", New: func() node.Service { return &leaseSvc{Lease: lease, Wait: wait} },
		Properties: []node.Property{leaseProp}}
	opts.N = 2
	m, err := consequence.NewActorModel(spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func leaseSearch(t *testing.T, m *consequence.ActorModel) *consequence.Result[*consequence.GlobalState, consequence.ActorAction] {
	t.Helper()
	res, err := consequence.NewChecker(m).Properties(m.Properties()...).Strategy(consequence.BFS).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A lease that expires (10 s) a second before the other node takes over
// (11 s) is safe under the virtual clock with the default skew, and
// reported broken with the clock off (AnyOrderTimers), the old rule.
func TestVirtualClockKeepsALease(t *testing.T) {
	res := leaseSearch(t, leaseModel(t, 10*time.Second, 11*time.Second, consequence.ActorOptions{}))
	if _, ok := res.Violated("OneHolder"); ok || res.Stop != consequence.StopCompleted || res.Unique != 3 {
		t.Fatalf("virtual clock: %d states, stop %v, violations %v; want 3 states (expire, then takeover), none", res.Unique, res.Stop, res.Violations)
	}
	res = leaseSearch(t, leaseModel(t, 10*time.Second, 11*time.Second, consequence.ActorOptions{AnyOrderTimers: true}))
	v, ok := res.Violated("OneHolder")
	if !ok || len(v.Path) != 1 || v.Path[0].Act.String() != "n2 timer takeover" {
		t.Fatalf("any order: %v (%d states), want the takeover first", res.Violations, res.Unique)
	}
}

// A takeover due within the skew bound of the expiry may fire first:
// the race a real deployment's clocks can show is still found.
func TestVirtualClockSkewAllowsARace(t *testing.T) {
	m := leaseModel(t, 10*time.Second, 11*time.Second, consequence.ActorOptions{ClockSkew: 2 * time.Second})
	v, ok := leaseSearch(t, m).Violated("OneHolder")
	if !ok || v.Path[0].Act.String() != "n2 timer takeover" {
		t.Fatalf("skew 2s: no violation (%v)", v)
	}
	// With the default skew, 50 ms apart is still a race.
	m = leaseModel(t, 10*time.Second, 10*time.Second+50*time.Millisecond, consequence.ActorOptions{})
	if _, ok := leaseSearch(t, m).Violated("OneHolder"); !ok {
		t.Fatal("default skew: a takeover 50 ms after the expiry is not raced")
	}
}

// twoTimers arms a short and a long timer; the short one re-arms itself
// for 1 s later, so the firing's clock shows in the new deadline.
type twoTimers struct{ Fired []string }

func (s *twoTimers) Init(env node.Env) {
	env.SetTimer("long", 5*time.Second)
	env.SetTimer("short", time.Second)
}

func (s *twoTimers) HandleTimer(env node.Env, name string) {
	s.Fired = append(s.Fired, name)
	if name == "short" {
		env.SetTimer("again", time.Second)
	}
}

func (s *twoTimers) HandleMessage(node.Env, node.ID, node.Message) {}
func (s *twoTimers) HandleApp(node.Env, node.Message)              {}
func (s *twoTimers) HandleTransportError(node.Env, node.ID)        {}

// A node's timers fire in deadline order, and a firing advances its clock
// to the deadline: "again", armed by "short" (1 s) for 1 s later, is due
// at 2 s, before "long" (5 s).
func TestVirtualClockOrdersANodesTimers(t *testing.T) {
	spec := node.Spec{Name: "timers", New: func() node.Service { return &twoTimers{} }}
	for _, any := range []bool{false, true} {
		m, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 1, AnyOrderTimers: any})
		if err != nil {
			t.Fatal(err)
		}
		var orders [][]string
		res, err := consequence.NewChecker(m).Properties(consequence.Property[*consequence.GlobalState]{
			Name: "record", Kind: node.Safety, Check: func(g *consequence.GlobalState) error {
				if f := g.Service(1).(*twoTimers).Fired; len(f) == 3 {
					orders = append(orders, f)
				}
				return nil
			}}).Strategy(consequence.BFS).Workers(1).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := [][]string{{"short", "again", "long"}}
		if any {
			want = [][]string{{"long", "short", "again"}, {"short", "again", "long"}, {"short", "long", "again"}}
		}
		slices.SortFunc(orders, slices.Compare)
		if !slices.EqualFunc(orders, want, slices.Equal) {
			t.Errorf("any order %v: orders %q (%d states), want %q", any, orders, res.Unique, want)
		}
	}
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 1})
	if err != nil {
		t.Fatal(err)
	}
	g := apply(t, m, m.Start(), "n1 timer short")
	st, now, _ := g.NodeState(1)
	if at, _ := st.TimerAt("again"); !now.Equal(consequence.DefaultStart.Add(time.Second)) || !at.Equal(consequence.DefaultStart.Add(2*time.Second)) {
		t.Fatalf("after short: clock %v, again due %v", now, at)
	}
}

func TestVirtualClockNegativeSkew(t *testing.T) {
	spec := node.Spec{Name: "timers", New: func() node.Service { return &twoTimers{} }}
	if _, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 1, ClockSkew: -1}); !errors.Is(err, consequence.ErrActorModel) {
		t.Fatalf("negative skew: %v", err)
	}
}
