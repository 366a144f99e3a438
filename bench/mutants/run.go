package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/bench/mutants/mutate"
	"github.com/seed6eee2ec7/crystalball/bench/mutants/schema"
	"github.com/seed6eee2ec7/crystalball/examples/zoo"
	"github.com/seed6eee2ec7/crystalball/examples/zoo/scoreboard"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// Every mutant's runs last runDuration (the zoo's cases too: their own
// durations, 2-4 minutes, made a debug run cost minutes of CPU), the last
// heal of it without faults, before liveness is judged.
const (
	runDuration = 90 * time.Second
	heal        = 30 * time.Second
	// maxEvents ends a run in a message storm: the originals' runs take
	// at most a few tens of thousands of handler steps.
	maxEvents = 300_000
)

// baseline is an original service's runs with a seed: what a mutant's
// runs are compared with.
type baseline struct {
	Service string                `json:"service"`
	Seed    uint64                `json:"seed"`
	Off     scoreboard.RunResult  `json:"off"`
	Debug   *scoreboard.RunResult `json:"debug,omitempty"`
	// Offline is the original's offline check.
	Offline offlineResult `json:"offline"`
	// Alarms are the verdicts of the debug run's predictions of
	// properties the off run kept (scoreboard.AlarmVerdict), by property.
	Alarms map[string]string `json:"alarms,omitempty"`
}

// outcome is one mutant's verdicts with one seed (see the command's
// documentation for each).
type outcome struct {
	Mutant mutate.Mutant `json:"mutant"`
	Seed   uint64        `json:"seed"`
	Killed bool          `json:"killed"`
	// KilledBy are the properties the off run broke and the original's
	// did not ("safety:Name" or "liveness:Name"); Kind is the first's.
	KilledBy []string `json:"killed_by,omitempty"`
	Kind     string   `json:"kind,omitempty"`
	// Predicted: the debug run predicted a property of KilledBy at all;
	// InTime: before its first violation (in the debug run, else the off
	// run; a liveness failure's is the end of the run), Lead before it.
	Predicted bool          `json:"predicted"`
	InTime    bool          `json:"predicted_in_time"`
	Lead      time.Duration `json:"lead_ns,omitempty"`
	// Late is, for a mutant predicted but not in time, how long after
	// the first violation the first prediction came.
	Late time.Duration `json:"late_ns,omitempty"`
	// DeadAtStart: a round of the debug run found a liveness property of
	// KilledBy dead at its snapshot (no walk from it satisfies it:
	// steering.LivenessOutcome.DeadAtStart). Not a prediction: rounds
	// find the originals' liveness properties dead at their first
	// snapshots too (the board's originals show it), so it is reported
	// apart and counts for nothing else.
	DeadAtStart bool `json:"dead_at_start,omitempty"`
	// Prevented: the steer run broke none of KilledBy's safety
	// properties and every liveness property the original kept holds.
	Prevented bool `json:"prevented"`
	// FalseAlarm: a survivor whose debug run predicted a property the
	// original's debug run (same seed) did not.
	FalseAlarm bool `json:"false_alarm"`
	// Crash is set, and the mutant neither killed nor survived, when its
	// off run ended in a handler's panic ("panic") or spent the event
	// budget ("event-budget": a message storm or a timer loop). No
	// property describes those, so nothing can predict them; they are
	// counted apart.
	Crash string `json:"crash,omitempty"`
	// Offline is the mutant's offline check (the same for every seed);
	// FoundOffline: it found a property the original's offline check
	// does not (the mutant would not have been shipped).
	Offline      offlineResult `json:"offline"`
	FoundOffline bool          `json:"found_offline"`
	// BiteAt is when a killed mutant first broke a killing property (a
	// safety property's first violation, a liveness property's first
	// outage, else the end of the run); AtStart: before the debug run's
	// first steering round reported (or it had none), so no online
	// prediction could come in time. CaughtBeforeBite: found offline, or
	// (biting later) predicted in time.
	BiteAt           time.Duration `json:"bite_at_ns,omitempty"`
	AtStart          bool          `json:"at_start,omitempty"`
	CaughtBeforeBite bool          `json:"caught_before_bite,omitempty"`
	// Latent: a survivor found offline; LatentConfirmed: the emulator,
	// forced along the found path, violated it too (a real bug the
	// emulated seed did not hit). A survivor's false alarm whose property
	// is its confirmed latent bug is real (FalseAlarmReal), not counted
	// among the false alarms.
	Latent          bool `json:"latent,omitempty"`
	LatentConfirmed bool `json:"latent_confirmed,omitempty"`
	FalseAlarmReal  bool `json:"false_alarm_real,omitempty"`
	// Alarms are the verdicts of the debug run's predictions the
	// original's did not make, by property: scoreboard.AlarmVerdict, or
	// "latent" for a property the mutant's confirmed latent bug breaks.
	// FalseAlarm is set when one is model-only or wrong.
	Alarms map[string]string     `json:"alarms,omitempty"`
	Off    scoreboard.RunResult  `json:"off"`
	Debug  scoreboard.RunResult  `json:"debug"`
	Steer  *scoreboard.RunResult `json:"steer,omitempty"`
}

// runner runs mutants of the corpus the program was built with.
type runner struct {
	ctx     context.Context
	cfg     scoreboard.Config
	deploys map[string]zoo.Case
	base    map[string]baseline      // by service and seed
	offline map[string]offlineResult // by service and mutant ID
	// onRun, when set, sees every run (progress).
	onRun func(what string, wall time.Duration)
}

// run runs mutant id (0: the original) of case k in mode m.
func (r *runner) run(k zoo.Case, id int, m steering.Mode, seed uint64) (scoreboard.RunResult, error) {
	schema.Active = id
	defer func() { schema.Active = 0 }()
	start := time.Now()
	res, err := scoreboard.RunOne(r.ctx, r.cfg, k, false, m, seed)
	if r.onRun != nil {
		r.onRun(fmt.Sprintf("%s mutant %d seed %d %v", k.Name, id, seed, m), time.Since(start))
	}
	return res, err
}

// baselineOf runs (once) the original of service with seed: off, and
// with debug when withDebug (the originals' false alarms).
func (r *runner) baselineOf(service string, seed uint64, withDebug bool) (baseline, error) {
	key := fmt.Sprintf("%s/%d", service, seed)
	b, ok := r.base[key]
	if ok && (b.Debug != nil || !withDebug) {
		return b, nil
	}
	k := r.deploys[service]
	if !ok {
		off, err := r.run(k, 0, steering.Off, seed)
		if err != nil {
			return b, err
		}
		b = baseline{Service: service, Seed: seed, Off: off}
		if b.Offline, err = r.offlineOf(k, 0); err != nil {
			return b, err
		}
	}
	if withDebug {
		d, err := r.run(k, 0, steering.Debug, seed)
		if err != nil {
			return b, err
		}
		b.Debug = &d
		for p := range d.FirstPredictions {
			if _, violated := b.Off.FirstViolations[p]; violated || slices.Contains(b.Off.LivenessFailed, p) {
				continue
			}
			v, err := r.judgeAlarm(k, 0, seed, p)
			if err != nil {
				return b, err
			}
			if b.Alarms == nil {
				b.Alarms = map[string]string{}
			}
			b.Alarms[p] = v
		}
	}
	r.base[key] = b
	return b, nil
}

// score runs mutant m with seed and decides its verdicts.
func (r *runner) score(m mutate.Mutant, seed uint64) (outcome, error) {
	k, ok := r.deploys[m.Service]
	if !ok {
		return outcome{}, fmt.Errorf("mutants: mutant %d: no deployment for service %q", m.ID, m.Service)
	}
	b, err := r.baselineOf(m.Service, seed, false)
	if err != nil {
		return outcome{}, err
	}
	o := outcome{Mutant: m, Seed: seed}
	if o.Offline, err = r.offlineOf(k, m.ID); err != nil {
		return o, err
	}
	orig, err := r.offlineOf(k, 0)
	if err != nil {
		return o, err
	}
	o.FoundOffline = o.Offline.tells(orig)
	if o.Off, err = r.run(k, m.ID, steering.Off, seed); err != nil {
		return o, err
	}
	switch {
	case o.Off.Panic != "":
		o.Crash = "panic"
		return o, nil
	case o.Off.EventBudgetSpent:
		o.Crash = "event-budget"
		return o, nil
	}
	o.KilledBy = killedBy(b.Off, o.Off)
	o.Killed = len(o.KilledBy) > 0
	if o.Debug, err = r.run(k, m.ID, steering.Debug, seed); err != nil {
		return o, err
	}
	if !o.Killed {
		// A prediction the original's debug run makes too is the
		// original's (scored with it), not the mutant's.
		if b, err = r.baselineOf(m.Service, seed, true); err != nil {
			return o, err
		}
		o.Latent = o.FoundOffline
		o.LatentConfirmed = o.Latent && o.Offline.Confirmed
		for p := range o.Debug.FirstPredictions {
			if _, also := b.Debug.FirstPredictions[p]; also {
				continue
			}
			v := "latent"
			if !o.LatentConfirmed || p != o.Offline.Property {
				if v, err = r.judgeAlarm(k, m.ID, seed, p); err != nil {
					return o, err
				}
			}
			if o.Alarms == nil {
				o.Alarms = map[string]string{}
			}
			o.Alarms[p] = v
			real := v == "latent" || v == string(scoreboard.AlarmReal)
			o.FalseAlarm = o.FalseAlarm || !real
			o.FalseAlarmReal = o.FalseAlarmReal || real
		}
		return o, nil
	}
	o.Kind = kindOf(o.KilledBy[0])
	o.judgePrediction(runDuration)
	o.judgeBite(runDuration)
	steer, err := r.run(k, m.ID, steering.Steer, seed)
	if err != nil {
		return o, err
	}
	o.Steer = &steer
	o.Prevented = prevented(b.Off, o.KilledBy, steer)
	return o, nil
}

// killedBy lists the properties run broke and base did not, safety
// first (by first violation), then liveness (in spec order).
func killedBy(base, run scoreboard.RunResult) []string {
	var safety []string
	for p := range run.FirstViolations {
		if _, was := base.FirstViolations[p]; !was {
			safety = append(safety, p)
		}
	}
	slices.SortFunc(safety, func(a, b string) int {
		return cmp.Or(cmp.Compare(run.FirstViolations[a], run.FirstViolations[b]), strings.Compare(a, b))
	})
	var out []string
	for _, p := range safety {
		out = append(out, "safety:"+p)
	}
	for _, p := range run.LivenessFailed {
		if !slices.Contains(base.LivenessFailed, p) {
			out = append(out, "liveness:"+p)
		}
	}
	return out
}

// judgePrediction sets Predicted, InTime and Lead from the debug run:
// duration is the run's length (a liveness failure's time).
func (o *outcome) judgePrediction(duration time.Duration) {
	for _, kp := range o.KilledBy {
		kind, p := kindOf(kp), kp[len(kindOf(kp))+1:]
		if _, dead := o.Debug.FirstDeadAtStart[p]; dead && kind == "liveness" {
			o.DeadAtStart = true
		}
		at, ok := o.Debug.FirstPredictions[p]
		if !ok {
			continue
		}
		o.Predicted = true
		when := duration
		if kind == "safety" {
			var seen bool
			if when, seen = o.Debug.FirstViolations[p]; !seen {
				when = o.Off.FirstViolations[p]
			}
		}
		switch {
		case at <= when && (!o.InTime || when-at > o.Lead):
			o.InTime, o.Lead = true, when-at
		case at > when && (o.Late == 0 || at-when < o.Late):
			o.Late = at - when
		}
	}
}

// judgeBite sets BiteAt, AtStart and CaughtBeforeBite of a killed
// mutant; duration is the run's length.
func (o *outcome) judgeBite(duration time.Duration) {
	o.BiteAt = duration
	for _, kp := range o.KilledBy {
		p := kp[len(kindOf(kp))+1:]
		at, ok := o.Off.FirstViolations[p]
		if kindOf(kp) == "liveness" {
			at, ok = o.Off.FirstOutages[p]
		}
		if ok && at < o.BiteAt {
			o.BiteAt = at
		}
	}
	o.AtStart = o.Debug.FirstRound == 0 || o.BiteAt < o.Debug.FirstRound
	o.CaughtBeforeBite = o.FoundOffline || (!o.AtStart && o.InTime)
}

// judgeAlarm replays the first prediction of property in mutant id's
// debug run with seed (scoreboard.ReplayPrediction) and returns its
// verdict.
func (r *runner) judgeAlarm(k zoo.Case, id int, seed uint64, property string) (string, error) {
	schema.Active = id
	defer func() { schema.Active = 0 }()
	start := time.Now()
	v, why, err := scoreboard.ReplayPrediction(r.ctx, r.cfg, k, false, steering.Debug, seed, property)
	if err != nil {
		return "", fmt.Errorf("mutants: replaying %s's prediction of %s: %w", k.Name, property, err)
	}
	if r.onRun != nil {
		r.onRun(fmt.Sprintf("%s mutant %d seed %d prediction of %s replayed: %s %s", k.Name, id, seed, property, v, why), time.Since(start))
	}
	return string(v), nil
}

// offlineOf runs (once) the offline check of mutant id of deployment k.
func (r *runner) offlineOf(k zoo.Case, id int) (offlineResult, error) {
	key := fmt.Sprintf("%s/%d", k.Name, id)
	if o, ok := r.offline[key]; ok {
		return o, nil
	}
	start := time.Now()
	o, err := offline(r.ctx, k, id)
	if err != nil {
		return o, err
	}
	if r.onRun != nil {
		r.onRun(fmt.Sprintf("%s mutant %d offline check (%d states)", k.Name, id, o.States), time.Since(start))
	}
	r.offline[key] = o
	return o, nil
}

// prevented reports whether the steer run broke none of the killing
// safety properties and kept every liveness property the original kept.
func prevented(base scoreboard.RunResult, killed []string, steer scoreboard.RunResult) bool {
	for _, kp := range killed {
		if kindOf(kp) == "safety" {
			if _, broke := steer.FirstViolations[kp[len("safety:"):]]; broke {
				return false
			}
		}
	}
	for _, p := range steer.LivenessFailed {
		if !slices.Contains(base.LivenessFailed, p) {
			return false
		}
	}
	return true
}

// kindOf is the kind prefix of a killing property ("safety:X" → safety).
func kindOf(kp string) string {
	for i := range len(kp) {
		if kp[i] == ':' {
			return kp[:i]
		}
	}
	return kp
}

// falseAlarm reports whether an original's debug run predicted a
// property its off run kept (a safety property it never violated, or a
// liveness property that held at the end) and the emulator forced along
// the prediction did not confirm it.
func (b baseline) falseAlarm() bool {
	for _, v := range b.Alarms {
		if v != string(scoreboard.AlarmReal) {
			return true
		}
	}
	return false
}

// realAlarm reports whether an original's debug run predicted a property
// its off run kept and the emulator confirmed it: a bug the seed missed.
func (b baseline) realAlarm() bool {
	for _, v := range b.Alarms {
		if v == string(scoreboard.AlarmReal) {
			return true
		}
	}
	return false
}
