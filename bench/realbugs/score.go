package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
)

// BugResult is one bug's row of the board.
type BugResult struct {
	Bug Bug `json:"bug"`
	// Confirmed: the regression test fails on the patched copy and
	// passes on the original. An unconfirmed bug is not scored.
	Confirmed bool        `json:"confirmed"`
	Check     CheckResult `json:"check"`
	// Emulate are the off runs, one per seed.
	Emulate []EmulateResult `json:"emulate"`
	// Online are the debug and steer runs of the first violating seeds.
	Online []OnlineResult `json:"online,omitempty"`
	// Watch is, when no seed bit (and for the control), a debug run of
	// the first seed with every prediction judged by a directed run
	// (columns.go): its predictions are the build's alarms.
	Watch *EmulateResult `json:"watch,omitempty"`
}

// OnlineResult is one violating seed run again with CrystalBall on.
type OnlineResult struct {
	Seed     uint64        `json:"seed"`
	Duration time.Duration `json:"duration_ns"`
	// Debug is the run with deep online debugging; Lead is how long
	// before the first alarm its earliest matching prediction came
	// (positive: in time).
	Debug EmulateResult `json:"debug"`
	Lead  time.Duration `json:"lead_ns"`
	// Steer is the run with steering and the immediate safety check;
	// Prevented says it raised no alarm of any kind (safety, bounded
	// outages, history, liveness): the bug avoided with liveness kept.
	Steer     EmulateResult `json:"steer"`
	Prevented bool          `json:"prevented"`
}

// Bitten counts the seeds whose off run raised an alarm; First is the
// earliest first alarm among them.
func (r BugResult) Bitten() (n int, first time.Duration) {
	for _, e := range r.Emulate {
		if len(e.Alarms) > 0 {
			n++
			if first == 0 || e.First < first {
				first = e.First
			}
		}
	}
	return n, first
}

// Found says whether any offline or emulated run found the bug.
func (r BugResult) Found() bool {
	n, _ := r.Bitten()
	return r.Confirmed && (r.Check.Found() || n > 0)
}

// Board is the scoreboard: the bugs, the control and the totals.
type Board struct {
	Plan    Plan        `json:"plan"`
	Bugs    []BugResult `json:"bugs"`
	Control []BugResult `json:"control"`
	Totals  Totals      `json:"totals"`
}

// Totals is the board's last line. Killed, AtStart, FoundOffline,
// CaughtBeforeBite, PredictedInTime, Prevented, Latent, LatentConfirmed
// and the false alarms are the mutation corpus board's columns
// (columns.go).
type Totals struct {
	Bugs           int `json:"bugs"`
	Confirmed      int `json:"confirmed"`
	Found          int `json:"found"`
	FoundByCheck   int `json:"found_by_check"`
	FoundByEmulate int `json:"found_by_emulate"`
	// Killed counts the bugs a seed's off run raised an alarm on; of
	// them AtStart bit before the first steering round, FoundOffline
	// were found by check where the control's check finds nothing alike,
	// CaughtBeforeBite found offline or (biting later) predicted in time.
	Killed           int `json:"killed"`
	AtStart          int `json:"at_start"`
	FoundOffline     int `json:"found_offline"`
	CaughtBeforeBite int `json:"caught_before_bite"`
	OnlineRuns       int `json:"online_runs"`
	PredictedInTime  int `json:"predicted_in_time"`
	Prevented        int `json:"prevented"`
	// Of the survivors: Latent found offline, LatentConfirmed confirmed
	// by the emulator; FalseAlarms predicted (watch run) what the
	// control's watch run did not and the directed run did not confirm,
	// FalseAlarmsReal what it did confirm; ModelOnly and Wrong split
	// FalseAlarms by verdict.
	Latent               int `json:"latent"`
	LatentConfirmed      int `json:"latent_confirmed"`
	FalseAlarms          int `json:"false_alarms"`
	FalseAlarmsReal      int `json:"false_alarms_real"`
	FalseAlarmsModelOnly int `json:"false_alarms_model_only"`
	FalseAlarmsWrong     int `json:"false_alarms_wrong"`
	// ControlRuns and ControlAlarms are the control's check and off runs
	// and those that raised an alarm; OriginalFalseAlarms its watch runs
	// with a prediction the directed run did not confirm,
	// OriginalAlarmsReal those with one it did.
	ControlRuns         int `json:"control_runs"`
	ControlAlarms       int `json:"control_alarms"`
	OriginalFalseAlarms int `json:"original_false_alarms"`
	OriginalAlarmsReal  int `json:"original_alarms_real"`
	// RunsFailed counts the emulated runs (off, online and watch, of the
	// bugs and the control) that stopped with an error of the toolchain
	// (EmulateResult.Failed).
	RunsFailed int `json:"runs_failed"`
}

// score runs the plan on the unpatched library (the control, once per
// service the bugs use) and on each bug.
func score(ctx context.Context, w *workspace, p Plan, bugs []Bug, progress io.Writer) (Board, error) {
	board := Board{Plan: p}
	original, err := w.copyModule(ctx, "original", nil)
	if err != nil {
		return board, err
	}
	control, err := w.build(ctx, "original", original)
	if err != nil {
		return board, err
	}
	var services []string
	for _, b := range bugs {
		if !slices.Contains(services, b.Service) {
			services = append(services, b.Service)
		}
	}
	for _, svc := range services {
		fmt.Fprintf(progress, "realbugs: control %s\n", svc)
		r, err := scoreBuild(ctx, control, Bug{Name: "control", Service: svc}, p, false)
		if err != nil {
			return board, err
		}
		r.Confirmed = true
		board.Control = append(board.Control, r)
	}
	for _, b := range bugs {
		fmt.Fprintf(progress, "realbugs: %s\n", b.Name)
		r, err := scoreBug(ctx, w, b, original, p)
		if err != nil {
			return board, err
		}
		board.Bugs = append(board.Bugs, r)
	}
	board.Totals = board.total()
	return board, nil
}

// scoreBug confirms a bug's patch and scores the patched library.
func scoreBug(ctx context.Context, w *workspace, b Bug, original string, p Plan) (BugResult, error) {
	patch, err := b.Patch()
	if err != nil {
		return BugResult{Bug: b}, err
	}
	dir, err := w.copyModule(ctx, b.Name, patch)
	if err != nil {
		return BugResult{Bug: b}, err
	}
	if err := confirm(ctx, dir, original, b); err != nil {
		return BugResult{Bug: b}, err
	}
	bin, err := w.build(ctx, b.Name, dir)
	if err != nil {
		return BugResult{Bug: b}, err
	}
	r, err := scoreBuild(ctx, bin, b, p, true)
	r.Confirmed = err == nil
	return r, err
}

// scoreBuild runs the searches, the emulated runs and (online) the
// debug and steer runs of the first violating seeds on one build.
func scoreBuild(ctx context.Context, bin string, b Bug, p Plan, online bool) (BugResult, error) {
	r := BugResult{Bug: b}
	var err error
	if r.Check, err = runChecks(ctx, bin, b.Service, p); err != nil {
		return r, err
	}
	for _, seed := range p.Seeds {
		e, err := runEmulate(ctx, bin, emulateArgs(b.Service, seed, p, nil), seed)
		if err != nil {
			return r, err
		}
		r.Emulate = append(r.Emulate, e)
	}
	if n, _ := r.Bitten(); n == 0 {
		if r.Watch, err = runWatch(ctx, bin, b.Service, p); err != nil {
			return r, err
		}
	}
	if !online {
		return r, nil
	}
	for _, e := range r.Emulate {
		if len(e.Alarms) == 0 || len(r.Online) >= p.Online {
			continue
		}
		o, err := runOnline(ctx, bin, b, e, p)
		if err != nil {
			return r, err
		}
		r.Online = append(r.Online, o)
	}
	return r, nil
}

// runOnline runs a violating seed again in --mode debug and in --mode
// steer --immediate, up to the off run's first alarm and the margin (at
// least minRun, at most the plan's OnlineDuration).
func runOnline(ctx context.Context, bin string, b Bug, off EmulateResult, p Plan) (OnlineResult, error) {
	q := p
	q.Duration = min(p.OnlineDuration, max(minRun, (off.First+p.Margin).Truncate(time.Second)+time.Second))
	o := OnlineResult{Seed: off.Seed, Duration: q.Duration}
	var err error
	if o.Debug, err = runEmulate(ctx, bin, emulateArgs(b.Service, off.Seed, q, []string{"--mode", "debug"}), off.Seed); err != nil {
		return o, err
	}
	bites := off.First
	if len(o.Debug.Alarms) > 0 {
		bites = o.Debug.First
	}
	if o.Debug.Predicted > 0 {
		o.Lead = bites - o.Debug.Predicted
	}
	if o.Steer, err = runEmulate(ctx, bin, emulateArgs(b.Service, off.Seed, q, []string{"--mode", "steer", "--immediate"}), off.Seed); err != nil {
		return o, err
	}
	o.Prevented = len(o.Steer.Alarms) == 0 && o.Steer.Failed == ""
	return o, nil
}

// total sums the board.
func (b Board) total() Totals {
	t := Totals{Bugs: len(b.Bugs)}
	for _, r := range b.Bugs {
		t.add(r, b.control(r.Bug.Service))
	}
	for _, c := range b.Control {
		t.RunsFailed += c.failedRuns()
		t.ControlRuns += len(c.Emulate) + 1
		t.ControlAlarms += btoi(c.Check.Found())
		for _, e := range c.Emulate {
			t.ControlAlarms += btoi(len(e.Alarms) > 0)
		}
		if c.Watch != nil {
			t.OriginalFalseAlarms += btoi(hasVerdict(c.Watch.Verdicts, emulation.PathModelOnly, emulation.PathWrong))
			t.OriginalAlarmsReal += btoi(hasVerdict(c.Watch.Verdicts, emulation.PathReal))
		}
	}
	return t
}

// add counts bug r, judged against its service's control ctl.
func (t *Totals) add(r BugResult, ctl *BugResult) {
	n, _ := r.Bitten()
	t.RunsFailed += r.failedRuns()
	t.Confirmed += btoi(r.Confirmed)
	t.Found += btoi(r.Found())
	t.FoundByCheck += btoi(r.Confirmed && r.Check.Found())
	t.FoundByEmulate += btoi(r.Confirmed && n > 0)
	for _, o := range r.Online {
		t.OnlineRuns++
		t.Prevented += btoi(o.Prevented)
	}
	if !r.Killed() {
		alarms := r.alarms(ctl)
		t.Latent += btoi(r.Latent(ctl))
		t.LatentConfirmed += btoi(r.LatentConfirmed(ctl))
		t.FalseAlarms += btoi(hasVerdict(alarms, emulation.PathModelOnly, emulation.PathWrong))
		t.FalseAlarmsReal += btoi(hasVerdict(alarms, emulation.PathReal, "latent"))
		t.FalseAlarmsModelOnly += btoi(hasVerdict(alarms, emulation.PathModelOnly))
		t.FalseAlarmsWrong += btoi(hasVerdict(alarms, emulation.PathWrong))
		return
	}
	t.Killed++
	atStart, offline := r.AtStart(), r.FoundOffline(ctl)
	t.AtStart += btoi(atStart)
	t.FoundOffline += btoi(offline)
	t.PredictedInTime += btoi(r.InTime())
	t.CaughtBeforeBite += btoi(offline || (!atStart && r.InTime()))
}

// failedRuns counts r's emulated runs that stopped with an error of the
// toolchain.
func (r BugResult) failedRuns() int {
	runs := slices.Clone(r.Emulate)
	for _, o := range r.Online {
		runs = append(runs, o.Debug, o.Steer)
	}
	if r.Watch != nil {
		runs = append(runs, *r.Watch)
	}
	n := 0
	for _, e := range runs {
		n += btoi(e.Failed != "")
	}
	return n
}

// control is the control's result for service (nil: none).
func (b Board) control(service string) *BugResult {
	for i := range b.Control {
		if b.Control[i].Bug.Service == service {
			return &b.Control[i]
		}
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// write prints the table and, last, the totals as one JSON line; with a
// file name it also writes the whole board there.
func (b Board) write(stdout io.Writer, file string) error {
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "bug\tkind\tcheck\tdepth\tstates\ts\tdirected\temulate\tfirst\tclass\tlead\tprevented\twatch alarms")
	for _, r := range b.Bugs {
		fmt.Fprintln(tw, r.row(b.control(r.Bug.Service)))
	}
	for _, r := range b.Control {
		fmt.Fprintln(tw, r.row(nil))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("realbugs: %w", err)
	}
	if file != "" {
		data, err := json.MarshalIndent(b, "", "  ")
		if err != nil {
			return fmt.Errorf("realbugs: %w", err)
		}
		if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("realbugs: %w", err)
		}
	}
	line, err := json.Marshal(b.Totals)
	if err != nil {
		return fmt.Errorf("realbugs: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "%s\n", line)
	return err
}

// row is one line of the table, judged against the control ctl (nil for
// a control's own row).
func (r BugResult) row(ctl *BugResult) string {
	name, kind := r.Bug.Name, r.Bug.Kind
	if name == "control" {
		name, kind = "control "+r.Bug.Service, "-"
	}
	check := "-"
	if r.Check.Found() {
		check = r.Check.Stage + " " + r.Check.Property
	}
	n, first := r.Bitten()
	lead, prevented := "-", "-"
	var leads, prev []string
	for _, o := range r.Online {
		switch {
		case o.Debug.Failed != "":
			leads = append(leads, fmt.Sprintf("s%d run failed", o.Seed))
		case o.Lead > 0:
			leads = append(leads, fmt.Sprintf("s%d %.1fs", o.Seed, o.Lead.Seconds()))
		default:
			leads = append(leads, fmt.Sprintf("s%d none", o.Seed))
		}
		prev = append(prev, fmt.Sprintf("s%d %v", o.Seed, o.Prevented))
	}
	if len(leads) > 0 {
		lead, prevented = strings.Join(leads, ","), strings.Join(prev, ",")
	}
	firstS := "-"
	if n > 0 {
		firstS = first.Truncate(time.Millisecond).String()
	}
	directed := "-"
	if r.Check.Confirmed != "" {
		directed = string(r.Check.Confirmed)
	}
	return fmt.Sprintf("%s\t%s\t%s\t%d\t%d\t%.1f\t%s\t%d/%d %s\t%s\t%s\t%s\t%s\t%s", name, kind, check, r.Check.Depth, r.Check.States,
		r.Check.Seconds, directed, n, len(r.Emulate), alarmNames(r.Emulate), firstS, r.class(ctl), lead, prevented, r.watchAlarms(ctl))
}

// class is when a killed bug bit (at start, later) or what a survivor is
// (latent, latent confirmed, survived); "-" for the control.
func (r BugResult) class(ctl *BugResult) string {
	switch {
	case r.Bug.Name == "control":
		return "-"
	case r.Killed() && r.AtStart():
		return "at start"
	case r.Killed():
		return "later"
	case r.LatentConfirmed(ctl):
		return "latent confirmed"
	case r.Latent(ctl):
		return "latent"
	}
	return "survived"
}

// watchAlarms lists the watch run's alarms with their verdicts (a
// control's: every prediction).
func (r BugResult) watchAlarms(ctl *BugResult) string {
	if r.Watch == nil {
		return "-"
	}
	if r.Watch.Failed != "" {
		return "run failed: " + r.Watch.Failed
	}
	vs := r.Watch.Verdicts
	if r.Bug.Name != "control" {
		vs = r.alarms(ctl)
	}
	if len(vs) == 0 {
		return "none"
	}
	var parts []string
	for _, v := range vs {
		parts = append(parts, v.Property+" "+string(v.Verdict))
	}
	return strings.Join(parts, ",")
}

// alarmNames lists the distinct alarms of the runs.
func alarmNames(rs []EmulateResult) string {
	var names []string
	for _, e := range rs {
		for _, a := range e.Alarms {
			if strings.HasPrefix(a, "panic") {
				a = "panic"
			}
			if !slices.Contains(names, a) {
				names = append(names, a)
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "(" + strings.Join(names, ",") + ")"
}
