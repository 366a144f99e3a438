package consequence_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/examples/zoo/resend"
	"github.com/seed6eee2ec7/crystalball/node"
)

// resendViolation finds the resend service's bug with faults f and
// returns the model and the violation.
func resendViolation(t *testing.T, f consequence.Faults) (*consequence.ActorModel, consequence.Violation[*consequence.GlobalState, consequence.ActorAction]) {
	t.Helper()
	m, err := consequence.NewActorModel(resend.Spec(resend.Options{Items: 2, Retries: 1}), consequence.ActorOptions{N: 2, Faults: f})
	if err != nil {
		t.Fatal(err)
	}
	res, err := consequence.NewChecker(m).Properties(m.Properties()...).Strategy(consequence.BFS).MaxDepth(14).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) == 0 {
		t.Fatalf("%+v: no violation", f)
	}
	return m, res.Violations[0]
}

// TestDeliveryReportReplays: a violation through a duplicate, a late
// delivery and a loss reports as JSON and replays to its fingerprint, and
// every state on its path packs and unpacks to the same state.
func TestDeliveryReportReplays(t *testing.T) {
	for _, f := range []consequence.Faults{{Duplicates: 1}, {Reorders: 1}, {Reorders: 1, Losses: 1, Duplicates: 1}} {
		m, v := resendViolation(t, f)
		rep, err := m.Report(v)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		var back consequence.ActorReport
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		path, end, err := m.ReplayReport(back, m.Properties())
		if err != nil {
			t.Fatalf("%+v: %v\n%s", f, err, b)
		}
		if end.Duplicates()+end.Reorders()+end.Losses() == 0 || len(path) != v.Depth {
			t.Fatalf("%+v: replayed %d steps spending no delivery fault", f, len(path))
		}
		p := m.NewPacker()
		g := m.Start()
		for _, a := range path {
			g, _ = m.Next(g, a.Act)
			back := p.Unpack(p.Pack(nil, g), g.Fingerprint())
			if back.Fingerprint() != g.Fingerprint() || back.String() != g.String() ||
				back.Duplicates() != g.Duplicates() || back.Reorders() != g.Reorders() || back.Losses() != g.Losses() {
				t.Fatalf("%+v: unpacked\n%v, want\n%v", f, back, g)
			}
			if x, y := m.Actions(back, nil), m.Actions(g, nil); len(x) != len(y) {
				t.Fatalf("%+v: unpacked state has %d actions, want %d", f, len(x), len(y))
			}
		}
	}
}

// TestDeliveryNothingDeclared: a declaration without budgets, and budgets
// without a declaration, leave the start state's fingerprint and actions
// as they are.
func TestDeliveryNothingDeclared(t *testing.T) {
	declared := resend.Spec(resend.Options{Items: 2, Retries: 1})
	plain := declared
	plain.Delivery = node.DeliverySpec{}
	var fps []node.Hash
	var acts []int
	for _, c := range []struct {
		spec node.Spec
		f    consequence.Faults
	}{{plain, consequence.Faults{}}, {declared, consequence.Faults{}}, {plain, consequence.Faults{Losses: 1, Duplicates: 1, Reorders: 1}}} {
		m, err := consequence.NewActorModel(c.spec, consequence.ActorOptions{N: 2, Faults: c.f})
		if err != nil {
			t.Fatal(err)
		}
		fps = append(fps, m.Start().Fingerprint())
		acts = append(acts, len(m.Actions(m.Start(), nil)))
	}
	if fps[0] != fps[1] || fps[0] != fps[2] || acts[0] != acts[1] || acts[0] != acts[2] {
		t.Fatalf("fingerprints %v, actions %v", fps, acts)
	}
}

// TestDeliveryRejects: bad budgets and declarations are errors.
func TestDeliveryRejects(t *testing.T) {
	spec := resend.Spec(resend.Options{Items: 1})
	for _, f := range []consequence.Faults{{Losses: -1}, {Duplicates: consequence.MaxDeliveryFaults + 1}, {Reorders: -2}} {
		if _, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 2, Faults: f}); !errors.Is(err, consequence.ErrActorModel) {
			t.Errorf("%+v: %v, want ErrActorModel", f, err)
		}
	}
	for _, d := range []node.DeliverySpec{
		{All: node.Delivery{Reordered: node.MaxReordered + 1}},
		{Types: map[string]node.Delivery{"resend.Nope": node.Unreliable(1)}},
		{Types: map[string]node.Delivery{"resend.Data": {Reordered: -1}}},
	} {
		bad := spec
		bad.Delivery = d
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v: valid", d)
		}
	}
}
