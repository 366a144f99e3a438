package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// churnWarmup is how long churn waits after the start of a run, so the
// overlay forms before nodes start leaving.
const churnWarmup = 30 * time.Second

// emulateOutput is the --json form of an emulated run: the configuration
// that produced it, the service's own summary of the final state, and the
// emulator's result.
type emulateOutput struct {
	Service        string           `json:"service"`
	Options        string           `json:"options"`
	Seed           uint64           `json:"seed"`
	Nodes          int              `json:"nodes"`
	Duration       string           `json:"duration"`
	ChurnPerMinute float64          `json:"churn_per_minute"`
	Heal           string           `json:"heal"`
	SilentFraction float64          `json:"silent_fraction"`
	Summary        []figure         `json:"summary"`
	Result         emulation.Result `json:"result"`
	WallSeconds    float64          `json:"wall_seconds"`
	Speedup        float64          `json:"speedup"`
	summaryLine    string           // human form of Summary
}

func runEmulate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("emulate", stderr)
	service := fs.String("service", "randtree", "service to run ("+serviceNames()+")")
	nodes := fs.Int("nodes", 25, "number of nodes (IDs 1..N)")
	duration := durationFlag(fs, "duration", 30*time.Minute, "virtual time to emulate (e.g. 90s, 30m, 1.4h)")
	churn := fs.String("churn", "1/m", "leave-and-rejoin events per unit of time: N/s, N/m, N/h, or 0")
	silent := fs.Float64("silent", emulation.DefaultSilentFraction, "fraction of churn leaves whose TCP RST is lost, in [0, 1]")
	downtime := durationFlag(fs, "downtime", emulation.DefaultDowntime, "mean time a churned node stays down")
	heal := durationFlag(fs, "heal", -1, "churn-free time at the end of the run, before liveness is judged (auto: a quarter of --duration, at most 5m)")
	fix := fs.String("fix", "", "service corrections to apply: all, or a comma-separated list")
	seed := fs.Uint64("seed", 1, "seed of the run (the only source of randomness)")
	tracePath := fs.String("trace", "", "write the per-event trace to this file")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the summary")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	snapEvery := durationFlag(fs, "snapshots", 0, "run a checkpoint manager on every node, checkpointing and gathering its neighbourhood at this interval (e.g. 10s; 0: off)")
	modeName := fs.String("mode", "off", "steering controller on every node: off, debug (predict and report) or steer (also install event filters); needs --snapshots")
	immediate := fs.Bool("immediate", false, "run the immediate safety check before every handler")
	steerStates := fs.Int("steer-states", 2000, "unique states per search of a steering round")
	steerResets := fs.Int("steer-resets", 1, "node resets a steering round explores along a path (silent)")
	breakConn := fs.Bool("break-connection", false, "steering filters and vetoes also break the connection to a dropped message's sender")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: crystalball emulate [flags]")
		fmt.Fprintln(fs.Output(), "Runs an emulated deployment on virtual time and reports property violations.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *nodes <= 0 || *nodes > emulation.MaxNodes {
		return usagef("--nodes must be positive and at most %d, got %d", emulation.MaxNodes, *nodes)
	}
	if *duration <= 0 {
		return usagef("--duration must be positive, got %v", *duration)
	}
	if *downtime <= 0 {
		return usagef("--downtime must be positive, got %v", *downtime)
	}
	if *snapEvery < 0 {
		return usagef("--snapshots must not be negative, got %v", *snapEvery)
	}
	mode, err := steering.ParseMode(*modeName)
	if err != nil {
		return usagef("--mode: %q is not off, debug or steer", *modeName)
	}
	if mode != steering.Off && *snapEvery == 0 {
		return usagef("--mode %v needs --snapshots (rounds start from gathered snapshots)", mode)
	}
	if *steerStates <= 0 || *steerResets < 0 {
		return usagef("--steer-states must be positive and --steer-resets not negative")
	}
	if !(*silent >= 0 && *silent <= 1) {
		return usagef("--silent must be in [0, 1], got %v", *silent)
	}
	rate, err := parseRate(*churn)
	if err != nil {
		return usagef("--churn: %v", err)
	}
	if *heal < 0 {
		*heal = min(*duration/4, 5*time.Minute)
	}
	churnUntil := *duration - *heal
	if rate > 0 && churnUntil <= churnWarmup {
		return usagef("--duration %v leaves no time for churn after the %v warm-up and %v of healing", *duration, churnWarmup, *heal)
	}
	svc, err := lookupService(*service, splitList(*fix), *nodes)
	if err != nil {
		return err
	}

	cfg := emulation.Config{
		Spec:     svc.spec,
		Nodes:    *nodes,
		Seed:     *seed,
		Duration: *duration,
		Workload: svc.workload,
		Churn: emulation.ChurnConfig{
			Rate:           rate,
			Downtime:       *downtime,
			SilentFraction: emulation.Fraction(*silent),
			After:          churnWarmup,
			Until:          churnUntil,
		},
	}
	if *snapEvery > 0 {
		cfg.Snapshots = &emulation.SnapshotConfig{Manager: snapshot.Config{Interval: *snapEvery, GatherInterval: *snapEvery}}
	}
	if mode != steering.Off || *immediate {
		cfg.Steering = &emulation.SteeringConfig{
			Controller: steering.Config{
				Mode:            mode,
				Faults:          consequence.Faults{Resets: *steerResets, SilentResets: true},
				MaxStates:       *steerStates,
				BreakConnection: *breakConn,
			},
			Immediate: *immediate,
		}
	}
	var trace *bufio.Writer
	if *tracePath != "" {
		f, err := os.Create(*tracePath)
		if err != nil {
			return usagef("--trace: %v", err)
		}
		defer f.Close()
		trace = bufio.NewWriterSize(f, 1<<16)
		cfg.Trace = trace
	}
	em, err := emulation.New(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return usagef("--cpuprofile: %v", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	res, runErr := em.Run(ctx)
	if trace != nil {
		if err := trace.Flush(); err != nil && runErr == nil {
			runErr = fmt.Errorf("writing trace: %w", err)
		}
	}
	if runErr != nil {
		return fmt.Errorf("%w (rerun with --seed %d)", runErr, *seed)
	}
	out := emulateOutput{
		Service:        *service,
		Options:        svc.options,
		Seed:           *seed,
		Nodes:          *nodes,
		Duration:       duration.String(),
		ChurnPerMinute: rate,
		Heal:           heal.String(),
		SilentFraction: *silent,
		Summary:        svc.summarize(em.View()),
		Result:         res,
		WallSeconds:    res.WallTime.Seconds(),
	}
	if res.WallTime > 0 {
		out.Speedup = float64(res.VirtualDuration) / float64(res.WallTime)
	}
	out.summaryLine = svc.describe(em.View())
	if *asJSON {
		enc := json.NewEncoder(stdout)
		return enc.Encode(out)
	}
	printEmulateSummary(stdout, out)
	return nil
}

func printEmulateSummary(w io.Writer, o emulateOutput) {
	r := o.Result
	churn := "no churn"
	if o.ChurnPerMinute > 0 {
		churn = fmt.Sprintf("churn %g/min (%.0f%% silent) then %s of healing", o.ChurnPerMinute, 100*o.SilentFraction, o.Heal)
	}
	fmt.Fprintf(w, "%s emulation: %d nodes, %s virtual, %s, seed %d\n", o.Service, o.Nodes, o.Duration, churn, o.Seed)
	fmt.Fprintf(w, "  options:   %s\n", o.Options)
	fmt.Fprintf(w, "  final:     %s\n", o.summaryLine)
	fmt.Fprintf(w, "  messages:  %d sent, %d delivered, %d dropped, %d retransmitted; %d transport errors\n",
		r.Messages.Sent, r.Messages.Delivered, r.Messages.Dropped, r.Messages.Retransmissions, r.TransportErrors)
	if r.Messages.Protocol > 0 {
		fmt.Fprintf(w, "             (%d of those sent were snapshot protocol messages, for the checkpoint managers)\n", r.Messages.Protocol)
	}
	fmt.Fprintf(w, "  events:    %d (%d resets; churn: %d leaves, %d silent, %d rejoins)\n",
		r.Events, r.Resets, r.Churn.Leaves, r.Churn.SilentLeaves, r.Churn.Rejoins)
	if s := r.Snapshots; s != nil {
		t := s.Totals
		perNode := float64(o.Nodes) * r.VirtualDuration.Seconds()
		avg := func(a, b int64) float64 {
			if b == 0 {
				return 0
			}
			return float64(a) / float64(b)
		}
		fmt.Fprintf(w, "  snapshots: %d gathered, %d given up; %d checkpoints (%d periodic, %d forced, %d requested)\n",
			s.Gathers, s.Failures, t.Periodic+t.Forced+t.Requested, t.Periodic, t.Forced, t.Requested)
		fmt.Fprintf(w, "             %d answers: %.0f B raw, %.0f B sent per checkpoint (%d unchanged, %d deltas); %.0f b/s checkpoints, %.0f b/s answers per node\n",
			t.Responses, avg(t.RawStateBytes, t.Responses), avg(t.StateBytes, t.Responses), t.Unchanged, t.Deltas,
			float64(t.StateBytes)*8/perNode, float64(t.ResponseBytes)*8/perNode)
	}
	if s := r.Steering; s != nil {
		var predicted uint64
		for _, n := range s.Predicted {
			predicted += n
		}
		fmt.Fprintf(w, "  steering:  %d rounds (%d reused the last round's outcome), %d states explored, %d violations predicted (%d replayed), %d filters installed, %d unhelpful\n",
			s.Rounds, s.RoundsReused, s.StatesExplored, predicted, s.ReplayHits, s.FiltersInstalled, s.Unhelpful)
		fmt.Fprintf(w, "             %d filter hits, %d immediate-check vetoes in %d checks: %.2f%% of %d actions changed\n",
			s.FilterHits, s.Vetoes, s.ImmediateChecks, 100*s.ChangedShare(), s.Handled)
	}
	fmt.Fprintln(w, "  safety — states violating each property (episodes, first occurrence):")
	width := 0
	for _, s := range r.Safety {
		width = max(width, len(s.Name))
	}
	for _, l := range r.Liveness {
		width = max(width, len(l.Name))
	}
	for _, s := range r.Safety {
		line := fmt.Sprintf("    %-*s %6d", width, s.Name, s.ViolatedStates)
		if s.ViolatedStates > 0 {
			line += fmt.Sprintf("  (%d episodes, first at %s: %s — %s)",
				s.Episodes, clock(s.FirstViolation), s.FirstEvent, s.FirstError)
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w, "  liveness — on the final state, after healing:")
	for _, l := range r.Liveness {
		verdict := "holds"
		if !l.Holds {
			verdict = "does not hold: " + l.Error
		}
		fmt.Fprintf(w, "    %-*s %s\n", width, l.Name, verdict)
	}
	fmt.Fprintf(w, "  time:      %s virtual in %.2fs wall (%.0fx real time)\n",
		o.Duration, o.WallSeconds, o.Speedup)
}

// clock renders a virtual time offset as hh:mm:ss.mmm.
func clock(d time.Duration) string {
	h := d / time.Hour
	m := (d % time.Hour) / time.Minute
	s := (d % time.Minute) / time.Second
	ms := (d % time.Second) / time.Millisecond
	return fmt.Sprintf("%02d:%02d:%02d.%03d", h, m, s, ms)
}
