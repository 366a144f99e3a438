package steering

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// DefaultConfig is what New makes of a Config with only its Spec set
// (apart from the Spec and the properties taken from it).
func TestDefaultConfigIsWhatZeroMeans(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	got, err := Config{Spec: spec}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{Spec: spec}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Properties()) != 4 || len(c.LivenessProperties()) != 5 {
		t.Fatalf("safety %v, liveness %v: want RandTree's four safety and five liveness properties", c.Properties(), c.LivenessProperties())
	}
	got.Spec, got.Properties = DefaultConfig().Spec, nil // funcs do not compare
	want := DefaultConfig()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("zero config becomes %+v, DefaultConfig is %+v", got, want)
	}
}

// TestDefaultConfigValues: the defaults are the documented numbers,
// written out here rather than taken from the constants that define
// them, so that a changed default is a changed test.
func TestDefaultConfigValues(t *testing.T) {
	d := DefaultConfig()
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"MaxStates", d.MaxStates, 20_000}, {"FullDepth", d.FullDepth, 2}, {"NearStates", d.NearStates, 4_000},
		{"Workers", d.Workers, 1}, {"MaxViolations", d.MaxViolations, 4},
		{"Walks", d.Walks, 32}, {"DMax", d.DMax, 500}, {"DInit", d.DInit, 100}, {"K", d.K, 8},
		{"MaxWalkSteps", d.MaxWalkSteps, 40_000}, {"MaxSuspects", d.MaxSuspects, 4}, {"LiveFraction", d.LiveFraction, 0.95},
		{"SafetyWalks", d.SafetyWalks, 0}, {"SafetyWalkDepth", d.SafetyWalkDepth, 100},
		{"Arrivals", d.Arrivals, 2}, {"PostponeDelay", d.PostponeDelay, 500 * time.Millisecond},
		{"UnseenHold", d.UnseenHold, time.Minute}, {"Refinements", d.Refinements, 2}, {"MaxPaths", d.MaxPaths, 16},
		{"MaxInterventions", d.MaxInterventions, 5}, {"InterventionWindow", d.InterventionWindow, time.Minute},
		{"FilterHold", d.FilterHold, time.Duration(0)}, {"VetoHold", d.VetoHold, time.Duration(0)},
		{"ConfirmGrace", d.ConfirmGrace, 5 * time.Second},
	} {
		if c.got != c.want {
			t.Errorf("DefaultConfig().%s = %v, documented %v", c.name, c.got, c.want)
		}
	}
	if w := d.WalkWeights; len(w) != len(DefaultWalkWeights()) || w[consequence.ActTimer] != 0.1 || w[consequence.ActReset] != 0.02 {
		t.Errorf("DefaultConfig().WalkWeights = %v", w)
	}
}

// A negative budget in any group is an invalid configuration.
func TestConfigGroupsRefuseNegatives(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	for name, set := range map[string]func(*Config){
		"MaxStates":        func(c *Config) { c.MaxStates = -1 },
		"DMax":             func(c *Config) { c.DMax = -1 },
		"SafetyWalkDepth":  func(c *Config) { c.SafetyWalkDepth = -1 },
		"Arrivals":         func(c *Config) { c.Arrivals = -1 },
		"PostponeDelay":    func(c *Config) { c.PostponeDelay = -1 },
		"VetoHold":         func(c *Config) { c.VetoHold = -1 },
		"LiveFraction":     func(c *Config) { c.LiveFraction = 2 },
		"DInit past DMax":  func(c *Config) { c.DMax, c.DInit = 10, 10 },
		"LookAhead.Depth":  func(c *Config) { c.LookAhead.Depth = -1 },
		"Requests.PerPeer": func(c *Config) { c.Requests.PerPeer = -1 },
	} {
		c := Config{Spec: spec}
		set(&c)
		if _, err := New(c, 1); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: New = %v, want ErrInvalidConfig", name, err)
		}
	}
}
