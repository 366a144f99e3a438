package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// errUsage is returned (wrapped) for bad command-line usage.
var errUsage = errors.New("steerlive: usage")

// Target is one service configuration a plan runs: a service of the
// registry, the corrections its runs take (--fix; empty: the service as
// it is, planted bug and all) and its number of nodes.
type Target struct {
	Service string `json:"service"`
	Fix     string `json:"fix,omitempty"`
	Nodes   int    `json:"nodes"`
}

// Label names the target in tables: "permits", "permits --fix all".
func (t Target) Label() string {
	if t.Fix == "" {
		return t.Service
	}
	return t.Service + " --fix " + t.Fix
}

// ParseTargets reads a --services list: comma-separated NAME[:FIX][@NODES]
// items ("permits:all@3": the permit limiter's twin on three nodes);
// NODES defaults to nodes.
func ParseTargets(s string, nodes int) ([]Target, error) {
	var out []Target
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		t := Target{Nodes: nodes}
		if name, n, ok := strings.Cut(item, "@"); ok {
			v, err := strconv.Atoi(n)
			if err != nil || v <= 0 {
				return nil, fmt.Errorf("%w: --services: %q: %q is not a number of nodes", errUsage, item, n)
			}
			item, t.Nodes = name, v
		}
		t.Service, t.Fix, _ = strings.Cut(item, ":")
		if t.Service == "" {
			return nil, fmt.Errorf("%w: --services: %q names no service", errUsage, item)
		}
		if slices.Contains(out, t) {
			return nil, fmt.Errorf("%w: --services: %q is listed twice", errUsage, item)
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: --services names no service", errUsage)
	}
	return out, nil
}

// ParseSeeds reads a --seeds list: comma-separated seeds and inclusive
// ranges ("1-12", "1,4,7-9").
func ParseSeeds(s string) ([]uint64, error) {
	var out []uint64
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(item, "-")
		a, err := strconv.ParseUint(lo, 10, 64)
		b := a
		if err == nil && isRange {
			b, err = strconv.ParseUint(hi, 10, 64)
		}
		if err != nil || b < a {
			return nil, fmt.Errorf("%w: --seeds: %q is not a seed or a range of seeds", errUsage, item)
		}
		for v := a; v <= b; v++ {
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: --seeds names no seed", errUsage)
	}
	return out, nil
}

// Mode is one configuration of CrystalBall a plan compares: off, the
// immediate safety check alone, or execution steering with the check (the
// names of experiments.ChurnConfigs).
type Mode string

// The modes, in the order a plan runs them; Off is the reference the
// others are scored against.
const (
	Off       Mode = "off"
	Immediate Mode = "immediate"
	Steer     Mode = "steer+immediate"
)

// Modes are every mode, in run order.
var Modes = []Mode{Off, Immediate, Steer}

// flags are the emulate flags of the mode.
func (m Mode) flags() []string {
	switch m {
	case Immediate:
		return []string{"--immediate"}
	case Steer:
		return []string{"--mode", "steer", "--immediate"}
	}
	return nil
}

// ParseModes reads a --modes list; off must be among them (it is what the
// others are scored against), and they run in the order of Modes.
func ParseModes(s string) ([]Mode, error) {
	var want []Mode
	for _, item := range strings.Split(s, ",") {
		m := Mode(strings.TrimSpace(item))
		if m == "" {
			continue
		}
		if !slices.Contains(Modes, m) {
			return nil, fmt.Errorf("%w: --modes: unknown mode %q (off, immediate, steer+immediate)", errUsage, m)
		}
		want = append(want, m)
	}
	if !slices.Contains(want, Off) {
		return nil, fmt.Errorf("%w: --modes must include off, the reference", errUsage)
	}
	var out []Mode
	for _, m := range Modes {
		if slices.Contains(want, m) {
			out = append(out, m)
		}
	}
	return out, nil
}

// Plan is what a measurement runs: every target with every seed in every
// mode, under one fault schedule. Its fields are the emulate flags they
// stand for, passed as they are (emulate checks them).
type Plan struct {
	Targets []Target `json:"targets"`
	Seeds   []uint64 `json:"seeds"`
	Modes   []Mode   `json:"modes"`
	// Duration, Churn and Breaks are emulate's --duration, --churn and
	// --breaks of every run.
	Duration string `json:"duration"`
	Churn    string `json:"churn"`
	Breaks   string `json:"breaks"`
	// Extra are flags added to every run, SteerExtra flags added to the
	// runs of every mode but off (a steering option under test).
	Extra      []string `json:"extra,omitempty"`
	SteerExtra []string `json:"steer_extra,omitempty"`
}

// Args are the emulate command line of one run of the plan.
func (p Plan) Args(t Target, seed uint64, m Mode) []string {
	args := []string{"emulate", "--service", t.Service, "--nodes", strconv.Itoa(t.Nodes),
		"--duration", p.Duration, "--churn", p.Churn, "--breaks", p.Breaks,
		"--seed", strconv.FormatUint(seed, 10)}
	if t.Fix != "" {
		args = append(args, "--fix", t.Fix)
	}
	args = append(args, m.flags()...)
	args = append(args, p.Extra...)
	if m != Off {
		args = append(args, p.SteerExtra...)
	}
	return append(args, "--json", "--quiet")
}

// Runs is the number of emulations the plan makes.
func (p Plan) Runs() int { return len(p.Targets) * len(p.Seeds) * len(p.Modes) }
