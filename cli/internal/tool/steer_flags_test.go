package tool

import (
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// emulateController parses emulate's flags and returns the controller
// configuration its run would give every node.
func emulateController(t *testing.T, args ...string) steering.Config {
	t.Helper()
	fs := newFlagSet("emulate", io.Discard)
	p := emulateParams{services: testCatalog()}
	p.register(fs)
	if err := fs.Parse(append([]string{"--nodes", "4"}, args...)); err != nil {
		t.Fatal(err)
	}
	if err := p.resolve(); err != nil {
		t.Fatalf("emulate %v: %v", args, err)
	}
	cfg := p.emulationConfig(serviceRun{})
	if cfg.Steering == nil {
		t.Fatalf("emulate %v: no steering", args)
	}
	return cfg.Steering.Controller
}

// nodeController parses node's flags and returns its controller
// configuration.
func nodeController(t *testing.T, args ...string) steering.Config {
	t.Helper()
	f, err := parseNodeFlags(testCatalog(), append([]string{"--id", "1"}, args...), io.Discard)
	if err != nil {
		t.Fatalf("node %v: %v", args, err)
	}
	return f.steeringConfig(node.Spec{})
}

// shared are the fields of steering.Config the shared flags set; the
// rest differ by shell on purpose (MaxTime: a live node's wall-time
// budget; Spec and Workload: the service's).
func shared(c steering.Config) steering.Config {
	return steering.Config{Mode: c.Mode, Faults: c.Faults,
		SearchBudget:         steering.SearchBudget{MaxStates: c.MaxStates},
		LivenessWalks:        steering.LivenessWalks{WalkOptions: steering.WalkOptions{Walks: c.Walks, DMax: c.DMax, DInit: c.DInit, K: c.K}, AdaptiveWeights: c.AdaptiveWeights, MaxWalkSteps: c.MaxWalkSteps, MaxSuspects: c.MaxSuspects, WalkWeights: c.WalkWeights},
		SafetyWalkConfig:     steering.SafetyWalkConfig{SafetyWalks: c.SafetyWalks, SafetyWalkDepth: c.SafetyWalkDepth},
		RoundModel:           steering.RoundModel{LastKnownFor: c.LastKnownFor},
		GatherPolicy:         steering.GatherPolicy{GatherOnFault: c.GatherOnFault},
		InterventionPolicy:   steering.InterventionPolicy{BreakConnection: c.BreakConnection},
		EscalationPolicy:     steering.EscalationPolicy{FilterHold: c.FilterHold, VetoHold: c.VetoHold},
		ImmediateCheckConfig: steering.ImmediateCheckConfig{ImmediateHop: c.ImmediateHop},
	}
}

// TestSteerFlagsMeanTheSameOnBothShells: the same steering flags give a
// live node and an emulated run the same controller configuration, at
// the defaults of each mode and with every shared flag set.
func TestSteerFlagsMeanTheSameOnBothShells(t *testing.T) {
	every := []string{"--steer-states", "1234", "--break-connection", "--immediate-hop", "--steer-last-known", "30s",
		"--filter-hold", "7s", "--veto-hold", "9s", "--adaptive-weights", "--gather-on-fault",
		"--steer-resets", "2", "--steer-breaks", "0", "--steer-drops", "3", "--steer-refusals", "1",
		"--walks", "5", "--walk-depth", "50", "--walk-warmup", "10", "--probe-walks", "4", "--walk-steps", "999",
		"--walk-suspects", "2", "--safety-walks", "6", "--safety-walk-depth", "40", "--walk-weights", "timer=0.5"}
	cases := [][]string{
		{"--mode", "debug"},
		{"--mode", "steer"},
		{"--immediate"},
		append([]string{"--mode", "steer"}, every...),
	}
	for _, args := range cases {
		em, nd := shared(emulateController(t, args...)), shared(nodeController(t, args...))
		if !reflect.DeepEqual(em, nd) {
			t.Errorf("%v:\n emulate %+v\n node    %+v", args, em, nd)
		}
	}
	c := nodeController(t, append([]string{"--mode", "steer"}, every...)...)
	want := steering.Config{Mode: steering.Steer,

		Faults:               consequence.Faults{Resets: 2, SilentResets: true, Drops: 3, Refusals: 1, Crashes: 1, Partitions: 1, ClockJumps: 1},
		SearchBudget:         steering.SearchBudget{MaxStates: 1234},
		LivenessWalks:        steering.LivenessWalks{WalkOptions: steering.WalkOptions{Walks: 5, DMax: 50, DInit: 10, K: 4}, AdaptiveWeights: true, MaxWalkSteps: 999, MaxSuspects: 2, WalkWeights: map[consequence.ActorActionKind]float64{consequence.ActTimer: 0.5}},
		SafetyWalkConfig:     steering.SafetyWalkConfig{SafetyWalks: 6, SafetyWalkDepth: 40},
		RoundModel:           steering.RoundModel{LastKnownFor: 30 * time.Second},
		GatherPolicy:         steering.GatherPolicy{GatherOnFault: true},
		InterventionPolicy:   steering.InterventionPolicy{BreakConnection: true},
		EscalationPolicy:     steering.EscalationPolicy{FilterHold: 7 * time.Second, VetoHold: 9 * time.Second},
		ImmediateCheckConfig: steering.ImmediateCheckConfig{ImmediateHop: true},
	}
	if got := shared(c); !reflect.DeepEqual(got, want) {
		t.Errorf("every flag set:\n got  %+v\n want %+v", got, want)
	}
}

// TestSteerStatesDefaultByMode: without --steer-states both shells search
// steering's budget for the mode (deep in Debug, cheap in Steer and for
// the immediate check alone).
func TestSteerStatesDefaultByMode(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"--mode", "debug"}, steering.DebugMaxStates},
		{[]string{"--mode", "steer"}, steering.SteerMaxStates},
		{[]string{"--immediate"}, steering.SteerMaxStates},
	} {
		if got := emulateController(t, c.args...).MaxStates; got != c.want {
			t.Errorf("emulate %v: %d states, want %d", c.args, got, c.want)
		}
		if got := nodeController(t, c.args...).MaxStates; got != c.want {
			t.Errorf("node %v: %d states, want %d", c.args, got, c.want)
		}
	}
}

// TestSteerBreakIsBreakConnection: node's former --steer-break still
// breaks the connection, on both shells, so recorded command lines keep
// their meaning.
func TestSteerBreakIsBreakConnection(t *testing.T) {
	if !emulateController(t, "--mode", "steer", "--steer-break").BreakConnection {
		t.Error("emulate --steer-break: no BreakConnection")
	}
	if !nodeController(t, "--mode", "steer", "--steer-break").BreakConnection {
		t.Error("node --steer-break: no BreakConnection")
	}
	if nodeController(t, "--mode", "steer").BreakConnection {
		t.Error("node without the flag breaks connections")
	}
}

// TestSteerFlagsBadValuesOnBothShells: a bad shared flag is the same usage
// error on either shell.
func TestSteerFlagsBadValuesOnBothShells(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "sideways"}, `--mode: want off, debug or steer, got "sideways"`},
		{[]string{"--mode", "debug", "--steer-states", "0"}, "--steer-states must be positive, got 0"},
		{[]string{"--mode", "debug", "--steer-last-known", "-1s"}, "--steer-last-known must not be negative"},
		{[]string{"--mode", "debug", "--filter-hold", "-1s"}, "--filter-hold and --veto-hold must not be negative"},
		{[]string{"--mode", "debug", "--second-hop", "-1"}, "--second-hop must not be negative"},
		{[]string{"--mode", "debug", "--snapshots", "0"}, "--mode debug needs a snapshot manager"},
		{[]string{"--immediate", "--snapshots", "0"}, "--immediate needs a snapshot manager"},
		{[]string{"--mode", "debug", "--adaptive-weights=maybe"}, "invalid boolean value"},
	}
	for _, c := range cases {
		for _, shell := range [][]string{{"emulate", "--nodes", "3", "--duration", "1s"}, {"node", "--id", "1"}} {
			args := append(append([]string{}, shell...), c.args...)
			code, _, stderr := runCLI(args...)
			if code != exitUsage || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("%v: exit %d, stderr %q; want a one-line usage error containing %q", args, code, stderr, c.want)
			}
		}
	}
}
