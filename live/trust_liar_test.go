package live

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"

	"go.uber.org/zap"
)

// flagSvc raises its flag on a timer, and says hello to n1 at start (so
// that n1 counts it a neighbour).
type flagSvc struct {
	node.NopHandlers
	Raised bool
}

func (s *flagSvc) Init(env node.Env) {
	env.SetTimer("raise", 300*time.Millisecond)
	if env.Self() != 1 {
		env.Send(1, note{Text: "hello"})
	}
}
func (s *flagSvc) HandleTimer(env node.Env, name string) { s.Raised = true }

// flagSpec's one property: at most one node raised its flag.
func flagSpec() node.Spec {
	return node.Spec{Name: "flags", New: func() node.Service { return &flagSvc{} }, Messages: []node.Message{note{}},
		Properties: []node.Property{node.Always("AtMostOneRaised", func(v node.View) error {
			var up []node.ID
			for _, id := range v.Nodes() {
				if s, ok := v.Service(id).(*flagSvc); ok && s.Raised {
					up = append(up, id)
				}
			}
			if len(up) > 1 {
				return fmt.Errorf("raised at %v", up)
			}
			return nil
		})}}
}

// TestLyingMemberIsBounded: a member memberlist proved (n2) answers n1's
// gathers with a well-formed but false state of itself (its flag raised,
// which it is not). That is its own report, and n1 trusts it about n2:
// its rounds predict that its own timer breaks AtMostOneRaised and hold
// the timer back. The lie can do no more than that: the hold is bounded
// (the intervention budget, then FilterHold), after which n1's timer runs
// and n1 raises its flag; n1 sent n2 nothing but snapshot traffic, and n2
// (whose real flag the lie hid) was never asked to hold anything.
func TestLyingMemberIsBounded(t *testing.T) {
	defer livetest.VerifyNone(t)
	spec := flagSpec()
	reg, err := node.NewRegistry(spec.Messages...)
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := snapshot.NewLayer(snapshot.Config{Registry: reg, Interval: time.Hour,
		GatherConfig: snapshot.GatherConfig{GatherInterval: 50 * time.Millisecond, GatherSettle: 10 * time.Millisecond},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	steer, err := steering.NewLayer(steering.LayerConfig{Controller: steering.Config{Mode: steering.Steer, Spec: spec,
		SearchBudget:       steering.SearchBudget{MaxStates: 200},
		InterventionPolicy: steering.InterventionPolicy{PostponeDelay: 100 * time.Millisecond},
		EscalationPolicy:   steering.EscalationPolicy{FilterHold: 500 * time.Millisecond},
	}, Runner: NewRoundRunner()}, snaps)
	if err != nil {
		t.Fatal(err)
	}
	n1 := startFlagNode(t, 1, func(c *RuntimeConfig) { c.Layers = []layer.Layer{snaps, steer} })
	liar, err := node.NewCore(node.CoreConfig{ID: 2, Factory: spec.New})
	if err != nil {
		t.Fatal(err)
	}
	liar.SetState(node.State{Service: &flagSvc{Raised: true}}, time.Now())
	lie, err := liar.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	n2 := startFlagNode(t, 2, func(c *RuntimeConfig) {
		c.Layers = []layer.Layer{&liarLayer{answer: func([]byte) []byte { return lie }}}
	}, n1.Addr())
	defer stopNodes(t, n2, n1)
	waitFor(t, "n1's rounds to hold its timer back", func() bool { return steer.Status().FilterHits > 0 })
	waitFor(t, "n1 to raise its flag all the same", func() bool {
		var s flagSvc
		return json.Unmarshal(n1.Status().State, &s) == nil && s.Raised
	})
	st := steer.Status()
	if st.RequestsSent != 0 {
		t.Fatalf("n1 asked n2 to hold back its events on n2's own lie: %d requests", st.RequestsSent)
	}
	t.Logf("the lie held n1's timer back %d times (%v) before it ran", st.FilterHits, st.Interventions)
}

func startFlagNode(t *testing.T, id node.ID, tune func(*RuntimeConfig), join ...string) *Runtime {
	t.Helper()
	cfg := DefaultRuntimeConfig()
	cfg.ID, cfg.Join, cfg.Label, cfg.Logger = id, join, "test", zap.NewNop()
	cfg.JoinTimeout = waitDeadline
	tune(&cfg)
	r, err := NewRuntime(cfg, flagSpec())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Stop(t.Context()) })
	return r
}
