package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
)

// output is the part of emulate --json's object (format
// crystalball-emulate/1) a run is scored on.
type output struct {
	Format  string           `json:"format"`
	Service string           `json:"service"`
	Options string           `json:"options"`
	Seed    uint64           `json:"seed"`
	Nodes   int              `json:"nodes"`
	Result  emulation.Result `json:"result"`
}

// emulateFormat is the format output reads.
const emulateFormat = "crystalball-emulate/1"

// Verdict is one liveness or bounded property at the end of a run.
type Verdict struct {
	Name string `json:"name"`
	// Kind is "liveness" or "bounded".
	Kind string `json:"kind"`
	// Holds: a liveness property holds on the final state (after the
	// heal); a bounded one has no outage under way at the end (an
	// obligation open past its bound). Of a bounded property with more
	// outages than emulation.MaxOutages lists, an outage under way that
	// is neither listed nor the longest is not seen.
	Holds bool `json:"holds"`
	// Outages counts the property's outages over the run, Availability
	// the share of the run it held (emulation.TimedResult).
	Outages      int64   `json:"outages"`
	Availability float64 `json:"availability"`
}

// Record is one emulated run, scored.
type Record struct {
	Target Target   `json:"target"`
	Seed   uint64   `json:"seed"`
	Mode   Mode     `json:"mode"`
	Args   []string `json:"args"`
	// Violations sums the states violating a safety property; Violated
	// names the properties violated; First is the first violation's
	// virtual time (meaningful when Violations > 0).
	Violations int64         `json:"violations"`
	Violated   []string      `json:"violated,omitempty"`
	First      time.Duration `json:"first_violation_ns,omitempty"`
	// Properties are the liveness and bounded properties, in spec order.
	Properties []Verdict `json:"properties"`
	// Events are the handler steps of the run; Interventions the events
	// steering kept from a handler (filter hits and immediate-check
	// vetoes) out of Handled (emulation.SteeringResult.Handled).
	Events        int64  `json:"events"`
	Interventions uint64 `json:"interventions"`
	Handled       uint64 `json:"handled"`
	// Measured, not part of the run's outcome: the run's wall and process
	// CPU time, and the wall time the nodes' steering rounds took
	// (emulation.SteeringResult.ExplorationSeconds) over VirtualMinutes.
	WallSeconds    float64 `json:"wall_seconds"`
	CPUSeconds     float64 `json:"cpu_seconds"`
	RoundSeconds   float64 `json:"round_seconds"`
	VirtualMinutes float64 `json:"virtual_minutes"`
}

// ChangedPct is the share of actions steering changed, in percent.
func (r Record) ChangedPct() float64 {
	if r.Handled == 0 {
		return 0
	}
	return 100 * float64(r.Interventions) / float64(r.Handled)
}

// holds returns the verdict of property name at the end of the run.
func (r Record) holds(name string) (held, ok bool) {
	i := slices.IndexFunc(r.Properties, func(v Verdict) bool { return v.Name == name })
	if i < 0 {
		return false, false
	}
	return r.Properties[i].Holds, true
}

// held counts the liveness and bounded properties holding at the end.
func (r Record) held() int {
	n := 0
	for _, v := range r.Properties {
		if v.Holds {
			n++
		}
	}
	return n
}

// outages sums the outages of the liveness and bounded properties.
func (r Record) outages() int64 {
	var n int64
	for _, v := range r.Properties {
		n += v.Outages
	}
	return n
}

// score makes a run's record of its emulate --json output.
func score(t Target, seed uint64, m Mode, args []string, stdout []byte) (Record, error) {
	var out output
	if err := json.Unmarshal(stdout, &out); err != nil {
		return Record{}, fmt.Errorf("steerlive: %s: reading emulate's output: %w", strings.Join(args, " "), err)
	}
	if out.Format != emulateFormat {
		return Record{}, fmt.Errorf("steerlive: %s: output format %q, want %q", strings.Join(args, " "), out.Format, emulateFormat)
	}
	res := out.Result
	r := Record{Target: t, Seed: seed, Mode: m, Args: args, Events: res.Events,
		VirtualMinutes: res.VirtualDuration.Minutes(), Properties: []Verdict{}}
	for _, s := range res.Safety {
		if s.ViolatedStates == 0 {
			continue
		}
		if r.Violations == 0 || s.FirstViolation < r.First {
			r.First = s.FirstViolation
		}
		r.Violations += s.ViolatedStates
		r.Violated = append(r.Violated, s.Name)
	}
	live := map[string]bool{}
	for _, l := range res.Liveness {
		live[l.Name] = l.Holds
	}
	for _, tr := range res.Timed {
		v := Verdict{Name: tr.Name, Kind: tr.Kind, Outages: tr.Outages, Availability: tr.Availability}
		if held, ok := live[tr.Name]; ok {
			v.Holds = held
		} else {
			v.Holds = !tr.Longest.Ongoing && !slices.ContainsFunc(tr.List, func(o emulation.Outage) bool { return o.Ongoing })
		}
		r.Properties = append(r.Properties, v)
	}
	if s := res.Steering; s != nil {
		r.Interventions, r.Handled, r.RoundSeconds = s.FilterHits+s.Vetoes, s.Events, s.ExplorationSeconds
	}
	return r, nil
}

// processCPU returns the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runOne runs one emulation of the plan with the registry's services and
// scores it.
func runOne(ctx context.Context, reg *Registry, p Plan, t Target, seed uint64, m Mode) (Record, error) {
	args := p.Args(t, seed, m)
	if err := reg.prepare(ctx, t.Service); err != nil {
		return Record{}, err
	}
	var stdout, stderr bytes.Buffer
	start := time.Now()
	cpu, err := reg.run(ctx, t.Service, args, &stdout, &stderr)
	wall := time.Since(start)
	if err != nil {
		return Record{}, fmt.Errorf("steerlive: %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	r, err := score(t, seed, m, args, stdout.Bytes())
	if err != nil {
		return Record{}, err
	}
	r.WallSeconds, r.CPUSeconds = wall.Seconds(), cpu.Seconds()
	return r, nil
}
