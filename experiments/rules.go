package experiments

import (
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// Rules names the steering and gathering rules an experiment runs with.
// The documented figures of docs/RESULTS.md up to issue 26 were measured
// before issue 27 changed four rules of the library; RulesMeasured keeps
// those rules so the figures stay reproducible, RulesLibrary runs the
// library's defaults as a user gets them. The rules differ in one place,
// here.
type Rules string

const (
	// RulesMeasured are the rules of waves 1 and 2: gathers on the period
	// alone (no gather at start or on a neighbourhood change), an escalated
	// filter held at most 10 s and a veto at most a minute, vetoed
	// messages dropped without breaking their connection, no steering
	// requests to the node that owns an event, and every filter replaced by
	// the next completed round, whether it saw the filter's peer or not,
	// filters and holds forgotten at a reset, gathers of the
	// neighbourhood alone (not the peers the filters are about). The zero
	// Rules means these.
	RulesMeasured Rules = "measured"
	// RulesLibrary are the library's defaults since issue 27: a first
	// gather soon after start and after each change
	// (snapshot.DefaultGatherSettle), holds until safe with the liveness
	// guard, a vetoed message breaking its connection, steering
	// requests, durable filters re-checked after a restart with the
	// liveness guard, gathers that take in the filtered peers, and the
	// liveness budget (steering lifted where it starved a property).
	RulesLibrary Rules = "library"
)

// Held bounds of RulesMeasured (steering.Config.FilterHold and VetoHold).
const (
	measuredFilterHold = 10 * time.Second
	measuredVetoHold   = time.Minute
)

// ParseRules reads a Rules name; the empty string is RulesMeasured.
func ParseRules(s string) (Rules, error) {
	switch Rules(s) {
	case "", RulesMeasured:
		return RulesMeasured, nil
	case RulesLibrary:
		return RulesLibrary, nil
	}
	return "", fmt.Errorf("experiments: unknown rules %q (measured or library)", s)
}

// String is the rules' name.
func (r Rules) String() string {
	if r == "" {
		return string(RulesMeasured)
	}
	return string(r)
}

// library reports whether r are the library's defaults.
func (r Rules) library() bool { return r == RulesLibrary }

// snapshots returns m with the gather rule of r.
func (r Rules) snapshots(m snapshot.Config) snapshot.Config {
	if !r.library() {
		m.GatherSettle = -1
	}
	return m
}

// steering returns c with the hold, veto and request rules of r; hold
// bounds c sets are kept.
func (r Rules) steering(c steering.Config) steering.Config {
	if r.library() {
		return c
	}
	c.SilentVeto = true
	c.Requests.Off = true
	c.UnseenHold = -1
	c.Volatile = true
	c.NeighbourhoodGathers = true
	if c.FilterHold == 0 {
		c.FilterHold = measuredFilterHold
	}
	if c.VetoHold == 0 {
		c.VetoHold = measuredVetoHold
	}
	return c
}
