package steering_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// beepSvc is the smallest timer race consequence prediction prunes: n1's
// "beep" timer sends n2 a Beep and re-arms itself without changing n1's
// state; AtMostTwoBeeps fails at n2's third Beep, three firings of one
// timer in one unchanged local state.
type beepSvc struct{ Got int }

type beep struct{}

func (beep) MessageType() string { return "test.Beep" }

func (s *beepSvc) Init(env node.Env) {
	if env.Self() == 1 {
		env.SetTimer("beep", time.Second)
	}
}

func (s *beepSvc) HandleMessage(env node.Env, from node.ID, msg node.Message) { s.Got++ }

func (s *beepSvc) HandleTimer(env node.Env, name string) {
	env.Send(2, beep{})
	env.SetTimer("beep", time.Second)
}

func (s *beepSvc) HandleApp(env node.Env, call node.Message)       {}
func (s *beepSvc) HandleTransportError(env node.Env, peer node.ID) {}

func beepSpec() node.Spec {
	return node.Spec{
		Name:     "beep",
		New:      func() node.Service { return &beepSvc{} },
		Messages: []node.Message{beep{}},
		Properties: []node.Property{node.Always("AtMostTwoBeeps", func(v node.View) error {
			if s, ok := v.Service(2).(*beepSvc); ok && s.Got > 2 {
				return fmt.Errorf("n2 got %d beeps", s.Got)
			}
			return nil
		})},
	}
}

// TestSafetyWalksPredictWhatTheSearchPrunes: from the start of the beep
// race, n2's rounds without safety walks predict nothing (consequence
// prediction expands n1's timer once per local state); with them, the
// round predicts AtMostTwoBeeps, the path minimized to the three beeps and
// their deliveries, and in mode Steer installs the filter on n2's own
// event that the path suggests. Rounds are pure functions of the
// snapshot: two controllers agree.
func TestSafetyWalksPredictWhatTheSearchPrunes(t *testing.T) {
	spec := beepSpec()
	snap := startSnapshot(t, spec, []node.ID{1, 2}, 2)
	round := func(mode steering.Mode, walks int) *steering.RoundReport {
		t.Helper()
		c, err := steering.New(steering.Config{Mode: mode, Spec: spec, SafetyWalkConfig: steering.SafetyWalkConfig{SafetyWalks: walks, SafetyWalkDepth: 30}, RoundModel: steering.RoundModel{NoArrivals: true}}, 2)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := c.Round(context.Background(), snap)
		if err != nil {
			t.Fatal(err)
		}
		if st := c.Stats(); walks > 0 && (st.SafetyWalks == 0 || st.SafetyWalkSteps == 0) {
			t.Fatalf("stats %+v: no safety walk counted", st)
		}
		return rep
	}
	if rep := round(steering.Debug, 0); len(rep.Predictions) != 0 {
		t.Fatalf("without safety walks the round predicted %v: the test no longer shows what the search prunes", rep.Predictions)
	}
	rep := round(steering.Debug, 8)
	if len(rep.Predictions) == 0 || rep.Predictions[0].Property != "AtMostTwoBeeps" {
		t.Fatalf("with safety walks: predictions %v", rep.Predictions)
	}
	if got := len(rep.Predictions[0].Path); got != 6 {
		t.Errorf("the minimized path has %d events, want 6 (three beeps and their deliveries): %v", got, rep.Predictions[0].Report.Path)
	}
	if again := round(steering.Debug, 8); fmt.Sprint(again.Predictions) != fmt.Sprint(rep.Predictions) {
		t.Errorf("the same snapshot gave other predictions:\n%v\n%v", again.Predictions, rep.Predictions)
	}
	steer := round(steering.Steer, 8)
	if len(steer.Installed) == 0 || steer.Installed[0].String() != "n2: drop+break test.Beep from n1" {
		t.Errorf("mode Steer installed %v, want n2's drop of n1's Beep", steer.Installed)
	}
}

// TestSafetyWalksConfig: negative counts are configuration errors.
func TestSafetyWalksConfig(t *testing.T) {
	for _, cfg := range []steering.Config{{SafetyWalkConfig: steering.SafetyWalkConfig{SafetyWalks: -1}}, {SafetyWalkConfig: steering.SafetyWalkConfig{SafetyWalkDepth: -1}}} {
		cfg.Spec = beepSpec()
		if _, err := steering.New(cfg, 1); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}
