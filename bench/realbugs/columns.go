package main

import (
	"context"
	"slices"

	"github.com/seed6eee2ec7/crystalball/emulation"
)

// The toolchain's columns, as the mutation corpus's board (bench/mutants)
// reads them, so that the two boards read alike:
//
//   - killed: a seed's off run raised an alarm;
//   - at start: its first alarm came before the debug run's first
//     steering round (no prediction could be in time); later otherwise;
//   - found offline: check found a property the control's check does not;
//   - caught before bite: found offline, or (biting later) predicted in
//     time by the debug run;
//   - latent: a survivor (no seed bit) found offline; confirmed when the
//     emulator forced along check's path violates the property too
//     (check --confirm);
//   - false alarms: a survivor's watch run (--mode debug --confirm)
//     predicted a property the control's watch run did not, split by the
//     directed run's verdict (real, model-only, wrong); a prediction of
//     a confirmed latent bug is real. The control's own predictions that
//     are not real are the originals' false alarms.

// Killed says whether a seed's off run raised an alarm.
func (r BugResult) Killed() bool {
	n, _ := r.Bitten()
	return n > 0
}

// AtStart says whether a killed bug's first alarm came before the first
// steering round of its debug run (no debug run, or no round: at start).
func (r BugResult) AtStart() bool {
	if len(r.Online) == 0 {
		return true
	}
	o := r.Online[0]
	bites := o.Debug.First
	if len(o.Debug.Alarms) == 0 {
		_, bites = r.Bitten()
	}
	return o.Debug.FirstRound == 0 || bites < o.Debug.FirstRound
}

// InTime says whether the first online run predicted the alarm before it.
func (r BugResult) InTime() bool { return len(r.Online) > 0 && r.Online[0].Lead > 0 }

// FoundOffline says whether check found a property the control's check
// (ctl) does not find.
func (r BugResult) FoundOffline(ctl *BugResult) bool {
	if !r.Confirmed || !r.Check.Found() {
		return false
	}
	return ctl == nil || !ctl.Check.Found() || ctl.Check.Property != r.Check.Property
}

// Latent says whether a survivor was found offline; LatentConfirmed
// whether the emulator confirmed it.
func (r BugResult) Latent(ctl *BugResult) bool { return !r.Killed() && r.FoundOffline(ctl) }

// LatentConfirmed: a latent bug whose path the emulator took to the same
// violation.
func (r BugResult) LatentConfirmed(ctl *BugResult) bool {
	return r.Latent(ctl) && r.Check.Confirmed == emulation.PathReal
}

// alarms are a survivor's watch-run predictions the control's watch run
// does not make, each with its verdict ("latent" for the confirmed latent
// bug's own property).
func (r BugResult) alarms(ctl *BugResult) []Verdict {
	if r.Watch == nil {
		return nil
	}
	var theirs []string
	if ctl != nil && ctl.Watch != nil {
		for _, v := range ctl.Watch.Verdicts {
			theirs = append(theirs, v.Property)
		}
	}
	var out []Verdict
	for _, v := range r.Watch.Verdicts {
		if slices.Contains(theirs, v.Property) {
			continue
		}
		if r.LatentConfirmed(ctl) && v.Property == r.Check.Property {
			v.Verdict = "latent"
		}
		out = append(out, v)
	}
	return out
}

// hasVerdict says whether vs holds one of the verdicts.
func hasVerdict(vs []Verdict, verdicts ...emulation.PathVerdict) bool {
	return slices.ContainsFunc(vs, func(v Verdict) bool { return slices.Contains(verdicts, v.Verdict) })
}

// watchArgs are a watch run's flags: deep online debugging with every
// prediction judged by a directed run, for the online runs' length.
func watchArgs(service string, seed uint64, p Plan) []string {
	q := p
	q.Duration = p.OnlineDuration
	return emulateArgs(service, seed, q, []string{"--mode", "debug", "--confirm"})
}

// runWatch runs the watch run of a build no seed bit, on the plan's
// first seed (none with --online 0).
func runWatch(ctx context.Context, bin, service string, p Plan) (*EmulateResult, error) {
	if p.Online == 0 || len(p.Seeds) == 0 {
		return nil, nil
	}
	seed := p.Seeds[0]
	w, err := runEmulate(ctx, bin, watchArgs(service, seed, p), seed)
	if err != nil {
		return nil, err
	}
	return &w, nil
}
