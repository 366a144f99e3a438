package tool

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/report"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// churnWarmup is how long churn waits after the start of a run, so the
// overlay forms before nodes start leaving.
const churnWarmup = 30 * time.Second

// emulateFormat names the format of emulate --json's output.
const emulateFormat = "crystalball-emulate/1"

// EmulateOutput is the --json form of an emulated run: the configuration
// that produced it, the service's own summary of the final state, and the
// emulator's result.
type EmulateOutput struct {
	// Format is emulateFormat.
	Format         string           `json:"format"`
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
	// Predictors are the nodes that ran steering rounds (empty: every
	// node, or none without --mode); Predictions the distinct violations
	// they predicted, matched against the run (--mode debug or steer).
	Predictors  []node.ID       `json:"predictors,omitempty"`
	Predictions []predictionOut `json:"predictions,omitempty"`
	// FirstRoundS is when the first steering round started, in seconds
	// of virtual time (absent: no round): a violation before it came
	// before any prediction could.
	FirstRoundS float64 `json:"first_round_s,omitempty"`
	WallSeconds float64 `json:"wall_seconds"`
	Speedup     float64 `json:"speedup"`
	summaryLine string  // human form of Summary
	// predictionLog holds the rounds' distinct predictions with their
	// paths (macemc-baseline compares them with an offline search).
	predictionLog *steering.PredictionLog

	// BreaksPerMinute is --breaks: connection breaks per minute, in the
	// churn phase (absent when 0).
	BreaksPerMinute float64 `json:"breaks_per_minute,omitempty"`
	// Lasting describes the lasting faults of the run (--crashes,
	// --partitions, --clock-jumps, --skew, --schedule; absent: none).
	Lasting string `json:"lasting,omitempty"`
	// LivenessCost is what steering cost the liveness properties against
	// the control run with crystalball off (emulate_control.go; absent
	// unless --mode debug or steer or --immediate).
	LivenessCost *livenessCost `json:"liveness_cost,omitempty"`
}

// emulateParams are the flags of an emulated run, shared by 'emulate' and
// the experiments built on it (macemc-baseline).
type emulateParams struct {
	// services are the services --service names (required).
	services *catalog
	// progress, when set, shows the run's progress (runWithStatus).
	progress *progressLine
	// checkDeterminism is --check-determinism (emulate_determinism.go),
	// twin its second run.
	checkDeterminism bool
	twin             *determinismTwin
	service          string
	nodes            int
	duration         time.Duration
	churn            string
	breaks           string
	silent           float64
	downtime         time.Duration
	heal             time.Duration
	fix              string
	seed             uint64
	tracePath        string
	cpuProfile       string
	snapEvery        time.Duration
	steer            steerFlags
	predictors       int
	reports          string
	links            bandwidthFlags
	delivery         emulateDeliveryFlags
	lasting          lastingEmulateFlags // lasting_flags.go

	// Resolved by resolve.
	rate       float64
	breakRate  float64
	churnUntil time.Duration
	predicting []node.ID

	// args is the command line of 'emulate', recorded in the trace's
	// header so that 'trace show' can re-run it (nil: no header).
	args []string
	// budget is emulate's --budget and --max-memory (emulate_budget.go;
	// zero: none).
	budget emulateBudget
	// control is emulate's --control: a steered run is followed by its
	// control run with crystalball off (emulate_control.go).
	control bool
	// confirm is emulate's --confirm: each distinct prediction is judged
	// by a directed run (emulate_confirm.go).
	confirm bool
}

// Defaults of the steering flags in deep online debugging (--mode debug)
// and steering (--mode steer): the library's (emulation.ModeConfig), so a
// run with the defaults is the one other programs build from it.
const (
	debugPredictors  = emulation.DebugPredictors
	debugSteerStates = emulation.DebugMaxStates
	steerSteerStates = emulation.SteerMaxStates
	defaultSnapEvery = emulation.ModeSnapshotInterval
)

// register defines p's flags on fs; the steering and sampling ones that
// depend on --mode start at -1 (resolve picks them).
func (p *emulateParams) register(fs *flag.FlagSet) {
	fs.StringVar(&p.service, "service", p.services.defaultName(), "service to run ("+p.services.list()+")")
	fs.IntVar(&p.nodes, "nodes", 25, "number of nodes (IDs 1..N)")
	p.duration = 30 * time.Minute
	fs.Var(durationValue{&p.duration}, "duration", "virtual time to emulate (e.g. 90s, 30m, 1.4h)")
	fs.StringVar(&p.churn, "churn", "1/m", "leave-and-rejoin events per unit of time: N/s, N/m, N/h, or 0")
	fs.StringVar(&p.breaks, "breaks", "0", "connection breaks between live nodes per unit of time, in the churn phase (after the warm-up, until --heal): N/s, N/m, N/h, or 0")
	fs.Float64Var(&p.silent, "silent", emulation.DefaultSilentFraction, "fraction of churn leaves whose TCP RST is lost, in [0, 1]")
	p.downtime = emulation.DefaultDowntime
	fs.Var(durationValue{&p.downtime}, "downtime", "mean time a churned node stays down")
	p.heal = -1
	fs.Var(&autoDuration{d: &p.heal}, "heal", "churn-free time at the end of the run, before liveness is judged (auto: a quarter of --duration, at most 5m)")
	fs.StringVar(&p.fix, "fix", "", p.services.fixHelp())
	fs.Uint64Var(&p.seed, "seed", 1, "seed of the run (the only source of randomness)")
	fs.StringVar(&p.tracePath, "trace", "", "write the per-event trace to this file")
	fs.StringVar(&p.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	p.snapEvery = -1
	fs.Var(&autoDuration{d: &p.snapEvery}, "snapshots", "run a checkpoint manager on every node, checkpointing and gathering its neighbourhood at this interval (e.g. 10s; 0: off; default: 10s with --mode debug or steer or --immediate, else off)")
	p.steer.register(fs)
	p.predictors = -1 // chosen by --mode (resolve)
	fs.Var(&autoInt{n: &p.predictors}, "predictors", fmt.Sprintf("nodes that gather snapshots and run steering rounds, spread over the IDs from n1 (0: every node; default: %d with --mode debug, as in the paper's 100-node runs, every node with --mode steer); every node checkpoints and answers", debugPredictors))
	fs.StringVar(&p.reports, "reports", "", "with --mode debug or steer, write a prediction report ('crystalball trace show' replays it) for every distinct predicted violation into this directory")
	p.links.register(fs)
	p.delivery.register(fs)
	p.lasting.register(fs)
}

// resolve checks p and fills the values that depend on others, one group
// of flags after the other.
func (p *emulateParams) resolve() error {
	return firstFailingStep(
		p.checkRunShape,
		p.steer.resolve,
		p.resolveSnapshots,
		p.resolvePredictors,
		p.delivery.validate,
		p.links.validate,
		p.resolveChurnRates,
		func() error { return p.lasting.resolve(p.nodes) },
		p.resolveChurnPhase,
	)
}

// checkRunShape checks the size of the run: --nodes, --duration and
// --downtime.
func (p *emulateParams) checkRunShape() error {
	return FirstBrokenRule(
		UsageRule{p.nodes <= 0 || p.nodes > emulation.MaxNodes, usagef("--nodes must be positive and at most %d, got %d", emulation.MaxNodes, p.nodes)},
		UsageRule{p.duration <= 0, usagef("--duration must be positive, got %v", p.duration)},
		UsageRule{p.downtime <= 0, usagef("--downtime must be positive, got %v", p.downtime)},
	)
}

// resolveSnapshots checks --snapshots and picks its default: every
// defaultSnapEvery with a mode that steers, else off.
func (p *emulateParams) resolveSnapshots() error {
	if p.snapEvery < -1 {
		return usagef("--snapshots must not be negative, got %v", p.snapEvery)
	}
	if p.snapEvery == -1 {
		p.snapEvery = 0
		if p.steer.steers() {
			p.snapEvery = defaultSnapEvery
		}
	}
	if err := checkInterval("snapshots", p.snapEvery); err != nil {
		return err
	}
	return p.steer.checkSnapshots(p.snapEvery)
}

// resolvePredictors checks --predictors and --reports against --mode and
// --nodes, and picks the predicting nodes (--mode debug's default:
// debugPredictors of them).
func (p *emulateParams) resolvePredictors() error {
	off := p.steer.mode == steering.Off
	if err := FirstBrokenRule(
		UsageRule{p.predictors < -1 || p.predictors > p.nodes, usagef("--predictors must be between 0 and --nodes (%d), got %d", p.nodes, p.predictors)},
		UsageRule{p.predictors >= 0 && off, usagef("--predictors needs --mode debug or steer")},
		UsageRule{p.reports != "" && off, usagef("--reports needs --mode debug or steer")},
	); err != nil {
		return err
	}
	if p.predictors == -1 && p.steer.mode == steering.Debug {
		p.predictors = debugPredictors
	}
	p.predicting = predictorIDs(p.predictors, p.nodes)
	return nil
}

// resolveChurnRates checks --silent and parses --churn and --breaks.
func (p *emulateParams) resolveChurnRates() error {
	if !(p.silent >= 0 && p.silent <= 1) {
		return usagef("--silent must be in [0, 1], got %v", p.silent)
	}
	return parseNamedRates(namedRate{"churn", p.churn, &p.rate}, namedRate{"breaks", p.breaks, &p.breakRate})
}

// resolveChurnPhase picks --heal's default and the end of the churn
// phase, which must leave time after the warm-up for the faults it runs.
func (p *emulateParams) resolveChurnPhase() error {
	if p.heal < 0 {
		p.heal = min(p.duration/4, 5*time.Minute)
	}
	p.churnUntil = p.duration - p.heal
	if p.churns() && p.churnUntil <= churnWarmup {
		return usagef("--duration %v leaves no time for churn or breaks after the %v warm-up and %v of healing", p.duration, churnWarmup, p.heal)
	}
	return nil
}

// churns reports whether a fault runs in the churn phase: churn, breaks
// or a rate-driven lasting fault.
func (p *emulateParams) churns() bool {
	return p.rate > 0 || p.breakRate > 0 || p.lasting.rated()
}

// registerCommand registers every flag of 'emulate' on fs: the run's
// parameters (register), the memory budget and the command's own
// switches. 'trace debug' parses a trace's header with the same set, so
// every command line emulate accepts can be re-run.
func (p *emulateParams) registerCommand(fs *flag.FlagSet) (asJSON, quiet *bool) {
	p.register(fs)
	p.budget.register(fs)
	asJSON = fs.Bool("json", false, "print one JSON object instead of the summary")
	quiet = quietFlag(fs)
	fs.BoolVar(&p.control, "control", true, "with --mode debug or steer or --immediate, also run the same seed and schedule with crystalball off and report how many liveness properties steering cost (the control run has no snapshots and no rounds: it costs a fraction of the steered run)")
	fs.BoolVar(&p.confirm, "confirm", false, "with --mode debug or steer, judge each distinct prediction by a directed run: the same run again up to the round that made it, then the emulator forced along its path (real, model-only: a step the system could not take, or wrong: the property held); one rerun per prediction")
	fs.BoolVar(&p.checkDeterminism, "check-determinism", false, "run the emulation twice in step and stop at the first event where the two runs differ (both events shown): the service is not deterministic (twice the time)")
	return asJSON, quiet
}

func runEmulate(cat *catalog, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("emulate", stderr)
	p := emulateParams{services: cat}
	asJSON, quiet := p.registerCommand(fs)
	setUsage(fs, "emulate [flags]", "Runs an emulated deployment on virtual time and reports property violations; with --mode debug, also the violations its predicting nodes foresee (deep online debugging).")
	if err := firstFailingStep(
		func() error { return parseFlags(fs, args) },
		func() error { return p.checkParsed(fs) },
	); err != nil {
		return err
	}
	p.args = args
	p.progress = startProgress(stderr, progressModeOf(stderr, *quiet), "")
	defer p.progress.end()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	out, err := runEmulation(ctx, &p)
	if err != nil && out.Format == "" {
		return err
	}
	if *asJSON {
		return encodeJSONOr(stdout, out, err)
	}
	printEmulateSummary(stdout, out)
	return err
}

// checkParsed resolves and checks the flags fs parsed into p: the rules
// of 'emulate', for its own command line and for the one a trace's header
// holds ('trace show' re-runs it).
func (p *emulateParams) checkParsed(fs *flag.FlagSet) error {
	return firstFailingStep(
		func() error { return rejectNegativeAuto(fs) },
		p.resolve,
		p.checkConfirmMode,
		p.budget.validate,
	)
}

// checkConfirmMode refuses --confirm without predictions to judge.
func (p *emulateParams) checkConfirmMode() error {
	if p.confirm && p.steer.mode == steering.Off {
		return usagef("--confirm judges predictions: it needs --mode debug or steer")
	}
	return nil
}

// encodeJSONOr writes v to w as one JSON line and returns the encoding's
// error, else err (the run's, reported after its output).
func encodeJSONOr(w io.Writer, v any, err error) error {
	if jerr := json.NewEncoder(w).Encode(v); jerr != nil {
		return jerr
	}
	return err
}

// emulationConfig is the emulator's configuration for p (resolved) and
// svc: churn, snapshots and steering as the flags say; the caller sets the
// steering round and violation callbacks.
func (p *emulateParams) emulationConfig(svc serviceRun) emulation.Config {
	cfg := emulation.Config{
		Spec:     svc.spec,
		Nodes:    p.nodes,
		Seed:     p.seed,
		Duration: p.duration,
		Workload: svc.workload,
	}
	p.links.apply(&cfg.Network)
	cfg.Delivery = p.delivery.cfg
	p.applyChurn(&cfg)
	cfg.Snapshots = p.snapshotConfig(cfg.Network)
	cfg.Steering = p.steeringConfig(svc)
	p.lasting.apply(&cfg, churnWarmup, p.churnUntil)
	return cfg
}

// applyChurn sets the churn and the connection breaks of the churn phase
// in cfg (none at a zero rate).
func (p *emulateParams) applyChurn(cfg *emulation.Config) {
	if p.rate > 0 {
		cfg.Churn = emulation.ChurnConfig{
			Rate:           p.rate,
			Downtime:       p.downtime,
			SilentFraction: emulation.Fraction(p.silent),
			After:          churnWarmup,
			Until:          p.churnUntil,
		}
	}
	if p.breakRate > 0 {
		cfg.Breaks = emulation.BreakConfig{Rate: p.breakRate, After: churnWarmup, Until: p.churnUntil}
	}
}

// isPredictor reports whether node id runs steering rounds: every node
// without a list of predictors.
func (p *emulateParams) isPredictor(id node.ID) bool {
	return p.predicting == nil || slices.Contains(p.predicting, id)
}

// snapshotConfig is the checkpoint managers' configuration on network
// (nil: --snapshots off). Only the predictors gather neighbourhood
// snapshots, unless the immediate check needs every node's view.
func (p *emulateParams) snapshotConfig(network emulation.NetworkConfig) *emulation.SnapshotConfig {
	if p.snapEvery <= 0 {
		return nil
	}
	s := &emulation.SnapshotConfig{Manager: emulation.LinkedSnapshots(
		snapshot.Config{Interval: p.snapEvery, GatherConfig: snapshot.GatherConfig{GatherInterval: p.snapEvery, SecondHop: p.steer.secondHop}}, network)}
	if p.predicting != nil && !p.steer.immediate {
		s.Gatherers = p.isPredictor
	}
	return s
}

// steeringConfig is the steering layer's configuration for svc (nil:
// --mode off without --immediate), its rounds run by the predictors.
func (p *emulateParams) steeringConfig(svc serviceRun) *emulation.SteeringConfig {
	if !p.steer.steers() {
		return nil
	}
	s := &emulation.SteeringConfig{
		// Workload is set here, not left to the emulator's default,
		// so that the reports rebuild the rounds' model with it.
		Controller: steering.Config{Workload: svc.workload},
		Immediate:  p.steer.immediate,
		Shipped:    p.steer.shippedFilters,
	}
	p.steer.apply(&s.Controller)
	if p.predicting != nil {
		s.Predictors = p.isPredictor
	}
	return s
}

// emulatePredictions gathers what a run's steering rounds predicted: the
// distinct predictions with their paths, the violation episodes to match
// them against, and when the first round started.
type emulatePredictions struct {
	log        steering.PredictionLog
	episodes   episodeLog
	firstRound time.Duration
}

// watchPredictions makes cfg's rounds and violations recorded, with a
// mode (nothing is recorded with --mode off).
func (p *emulateParams) watchPredictions(cfg *emulation.Config) *emulatePredictions {
	w := &emulatePredictions{episodes: episodeLog{}}
	if p.steer.mode != steering.Off {
		cfg.Steering.OnRound = w.onRound
		cfg.OnViolation = w.episodes.add
	}
	return w
}

// onRound records one steering round's report.
func (w *emulatePredictions) onRound(id node.ID, at time.Duration, rep *steering.RoundReport) {
	if w.firstRound == 0 {
		w.firstRound = at // a round starts after a gather, never at 0
	}
	w.log.Add(emulation.Epoch.Add(at), id, rep)
}

// openTrace creates --trace's file (nothing without the flag) and makes
// cfg's run write its events there, with the causes 'trace show' draws
// the event graph from, after a header recording the command line;
// closeFile closes the file.
func (p *emulateParams) openTrace(cfg *emulation.Config) (trace *bufio.Writer, closeFile func(), err error) {
	if p.tracePath == "" {
		return nil, func() {}, nil
	}
	f, err := os.Create(p.tracePath)
	if err != nil {
		return nil, nil, usagef("--trace: %v", err)
	}
	trace = bufio.NewWriterSize(f, 1<<16)
	cfg.Trace = trace
	cfg.TraceCauses = true // for trace show's event graph
	if err := writeTraceHeader(trace, p.args); err != nil {
		f.Close()
		return nil, nil, err
	}
	return trace, func() { f.Close() }, nil
}

// newEmulator builds the emulator of cfg with its progress and
// --check-determinism hooks; after is the hook runWithStatus calls after
// each slice (nil: none).
func (p *emulateParams) newEmulator(ctx context.Context, cfg *emulation.Config) (em *emulation.Emulator, after func(time.Duration) error, err error) {
	p.roundProgress(cfg)
	if after, err = p.determinismHook(ctx, cfg); err != nil {
		return nil, nil, err
	}
	if em, err = emulation.New(*cfg); err != nil {
		return nil, nil, err
	}
	if p.twin != nil {
		p.twin.first = em
	}
	return em, after, nil
}

// runBudgeted runs em within emulate's budgets, then stops the CPU
// profile and flushes the trace. stopped is the budget that stopped the
// run (nil: none), in which case the partial run is no error: it is
// printed, then the stop reported.
func (p *emulateParams) runBudgeted(ctx context.Context, em *emulation.Emulator, after func(time.Duration) error, stopProfile func(), trace *bufio.Writer) (res emulation.Result, stopped, runErr error) {
	bctx, endBudget := p.budget.watch(ctx)
	res, runErr = runWithStatus(bctx, em, p.duration, p.progress, after, time.Now)
	endBudget()
	stopProfile()
	stopped = p.budget.spent(bctx, em.Elapsed(), p.duration)
	if stopped != nil {
		runErr = nil
	}
	if trace != nil {
		if err := trace.Flush(); err != nil && runErr == nil {
			runErr = fmt.Errorf("writing trace: %w", err)
		}
	}
	return res, stopped, runErr
}

// runEmulation runs the emulated deployment p (resolved) describes.
func runEmulation(ctx context.Context, p *emulateParams) (EmulateOutput, error) {
	svc, err := p.services.lookup(p.service, SplitList(p.fix), p.nodes)
	if err != nil {
		return EmulateOutput{}, err
	}
	cfg := p.emulationConfig(svc)
	preds := p.watchPredictions(&cfg)
	trace, closeTrace, err := p.openTrace(&cfg)
	if err != nil {
		return EmulateOutput{}, err
	}
	defer closeTrace()
	em, after, err := p.newEmulator(ctx, &cfg)
	if err != nil {
		return EmulateOutput{}, err
	}
	stopProfile, err := startCPUProfile(p.cpuProfile)
	if err != nil {
		return EmulateOutput{}, err
	}
	res, stopped, runErr := p.runBudgeted(ctx, em, after, stopProfile, trace)
	if runErr != nil {
		return EmulateOutput{}, seedHint{runErr, p.seed}
	}
	out := p.emulateOutput(svc, em, res)
	if out.LivenessCost, err = p.controlCost(ctx, cfg, res); err != nil {
		return out, errors.Join(seedHint{err, p.seed}, stopped)
	}
	if err := p.predictionOutcome(ctx, &out, cfg, svc, preds, res); err != nil {
		return out, errors.Join(err, stopped)
	}
	return out, stopped
}

// emulateOutput is the output of the run of svc by em with result res,
// before steering's figures.
func (p *emulateParams) emulateOutput(svc serviceRun, em *emulation.Emulator, res emulation.Result) EmulateOutput {
	out := EmulateOutput{
		Format:         emulateFormat,
		Service:        p.service,
		Options:        svc.options,
		Seed:           p.seed,
		Nodes:          p.nodes,
		Duration:       p.duration.String(),
		ChurnPerMinute: p.rate,
		Heal:           p.heal.String(),
		SilentFraction: p.silent,
		Summary:        svc.summarize(em.View()),
		Result:         res,
		WallSeconds:    res.WallTime.Seconds(),
	}
	out.BreaksPerMinute = p.breakRate
	out.Lasting = p.lasting.describe()
	if res.WallTime > 0 {
		out.Speedup = float64(res.VirtualDuration) / float64(res.WallTime)
	}
	out.summaryLine = svc.describe(em.View())
	return out
}

// controlCost is what steering cost the liveness properties of a steered
// run with result res (nil: the run does not steer), against the control
// run of cfg with crystalball off unless --control=false.
func (p *emulateParams) controlCost(ctx context.Context, cfg emulation.Config, res emulation.Result) (*livenessCost, error) {
	if !p.steer.steers() {
		return nil, nil
	}
	var control *emulation.Result
	if p.control {
		p.progress.setf("control run: crystalball off")
		ctl, err := controlRun(ctx, cfg)
		if err != nil {
			return nil, err
		}
		control = &ctl
	}
	return costOf(res.Liveness, control), nil
}

// predictionOutcome fills out's predictions with a mode (nothing with
// --mode off): matched against the run's result res, judged by directed
// runs (--confirm) and written as reports (--reports). A report that
// cannot be written loses nothing else: the run's figures are printed all
// the same.
func (p *emulateParams) predictionOutcome(ctx context.Context, out *EmulateOutput, cfg emulation.Config, svc serviceRun, preds *emulatePredictions, res emulation.Result) error {
	if p.steer.mode == steering.Off {
		return nil
	}
	out.Predictors = p.predicting
	out.Predictions = matchPredictions(&preds.log, preds.episodes, res.Liveness)
	out.predictionLog = &preds.log
	out.FirstRoundS = preds.firstRound.Seconds()
	if p.confirm {
		if err := confirmPredictions(ctx, p.emulationConfig(svc), &preds.log, out.Predictions, p.progress); err != nil {
			return seedHint{err, p.seed}
		}
	}
	if p.reports == "" {
		return nil
	}
	src := report.Source{Service: p.service, Fix: p.fix, Nodes: p.nodes, Options: svc.options, Spec: svc.spec,
		Mode: p.steer.mode, Workload: cfg.Steering.Controller.Workload, Faults: cfg.Steering.Controller.Faults, TimerSkew: cfg.Steering.Controller.TimerSkew}
	return writePredictionReports(p.reports, &preds.log, src, out.Predictions)
}

// startCPUProfile starts a CPU profile into the file name (--cpuprofile)
// unless name is empty; stop ends it and closes the file.
func startCPUProfile(name string) (stop func(), err error) {
	if name == "" {
		return func() {}, nil
	}
	f, err := os.Create(name)
	if err != nil {
		return nil, usagef("--cpuprofile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

func printEmulateSummary(w io.Writer, o EmulateOutput) {
	r := o.Result
	fmt.Fprintf(w, "%s emulation: %d nodes, %s virtual, %s, seed %d\n", o.Service, o.Nodes, o.Duration, emulateFaultsLine(o), o.Seed)
	fmt.Fprintf(w, "  options:   %s\n", o.Options)
	fmt.Fprintf(w, "  final:     %s\n", o.summaryLine)
	printTraffic(w, r)
	printNemesis(w, r.Nemesis)
	printLinks(w, r.Links, r.VirtualDuration, o.Nodes)
	printSnapshotStats(w, r, o.Nodes)
	printSteeringStats(w, o)
	printPropertyVerdicts(w, r)
	printLivenessCost(w, o.LivenessCost) // emulate_control.go
	printTimed(w, r)                     // emulate_timed.go
	fmt.Fprintf(w, "  time:      %s virtual in %.2fs wall (%s real time)\n",
		o.Duration, o.WallSeconds, speedFactor(o.Speedup))
}

// emulateFaultsLine describes the faults of the run for the summary's
// first line: churn (or none), breaks and lasting faults.
func emulateFaultsLine(o EmulateOutput) string {
	churn := "no churn"
	if o.ChurnPerMinute > 0 {
		churn = fmt.Sprintf("churn %g/min (%.0f%% silent) then %s of healing", o.ChurnPerMinute, 100*o.SilentFraction, o.Heal)
	}
	if o.BreaksPerMinute > 0 {
		churn += fmt.Sprintf(", connection breaks %g/min", o.BreaksPerMinute)
	}
	if o.Lasting != "" {
		churn += ", " + o.Lasting
	}
	return churn
}

// printTraffic prints the summary's messages and events lines.
func printTraffic(w io.Writer, r emulation.Result) {
	fmt.Fprintf(w, "  messages:  %d sent, %d delivered, %d dropped, %d retransmitted; %d transport errors\n",
		r.Messages.Sent, r.Messages.Delivered, r.Messages.Dropped, r.Messages.Retransmissions, r.TransportErrors)
	if r.Messages.Protocol > 0 {
		fmt.Fprintf(w, "             (%d of those sent were snapshot protocol messages, for the checkpoint managers)\n", r.Messages.Protocol)
	}
	breaks := ""
	if r.Breaks.Broken > 0 || r.Breaks.Skipped > 0 {
		breaks = fmt.Sprintf("; %d connections broken", r.Breaks.Broken)
	}
	fmt.Fprintf(w, "  events:    %d (%d resets; churn: %d leaves, %d silent, %d rejoins%s)\n",
		r.Events, r.Resets, r.Churn.Leaves, r.Churn.SilentLeaves, r.Churn.Rejoins, breaks)
}

// snapshotMean is a/b, 0 when b is 0 (no answers to average over).
func snapshotMean(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// printSnapshotStats prints the checkpoint managers' lines of a run with
// --snapshots (nothing without them).
func printSnapshotStats(w io.Writer, r emulation.Result, nodes int) {
	s := r.Snapshots
	if s == nil {
		return
	}
	t := s.Totals
	perNode := float64(nodes) * r.VirtualDuration.Seconds()
	fmt.Fprintf(w, "  snapshots: %d gathered, %d given up; %d checkpoints (%d periodic, %d forced, %d requested)\n",
		s.Gathers, s.Failures, t.Periodic+t.Forced+t.Requested, t.Periodic, t.Forced, t.Requested)
	fmt.Fprintf(w, "             %d answers: %.0f B raw, %.0f B sent per checkpoint (%d unchanged, %d deltas); %.0f b/s checkpoints, %.0f b/s answers per node\n",
		t.Responses, snapshotMean(t.RawStateBytes, t.Responses), snapshotMean(t.StateBytes, t.Responses), t.Unchanged, t.Deltas,
		float64(t.StateBytes)*8/perNode, float64(t.ResponseBytes)*8/perNode)
}

// printSteeringStats prints the steering layer's lines of a steered run
// and its predictions (nothing without steering).
func printSteeringStats(w io.Writer, o EmulateOutput) {
	s := o.Result.Steering
	if s == nil {
		return
	}
	fmt.Fprintf(w, "  steering:  %d rounds (%d reused the last round's outcome), %d states explored, %d violations predicted (%d replayed), %d filters installed, %d unhelpful\n",
		s.Rounds, s.RoundsReused, s.StatesExplored, s.Predictions(), s.ReplayHits, s.FiltersInstalled, s.FiltersUnhelpful)
	fmt.Fprintf(w, "             %d filter hits, %d immediate-check vetoes in %d checks: %.2f%% of %d actions changed; %.2fs of wall time exploring\n",
		s.FilterHits, s.Vetoes, s.ImmediateChecks, 100*s.ChangedShare(), s.Events, s.ExplorationSeconds)
	fmt.Fprintf(w, "             steering lifted: %s\n", s.LiftsLine())
	if s.Rounds > 0 {
		printPredictions(w, o.Predictions, o.Predictors, s.Rounds)
	}
}

// printPropertyVerdicts prints the safety properties' violations and the
// liveness properties' verdicts on the final state, names aligned.
func printPropertyVerdicts(w io.Writer, r emulation.Result) {
	width := 0
	for _, s := range r.Safety {
		width = max(width, len(s.Name))
	}
	for _, l := range r.Liveness {
		width = max(width, len(l.Name))
	}
	fmt.Fprintln(w, "  safety — states violating each property (episodes, first occurrence):")
	for _, s := range r.Safety {
		fmt.Fprintln(w, safetySummaryLine(s, width))
	}
	fmt.Fprintln(w, "  liveness — on the final state, after healing:")
	for _, l := range r.Liveness {
		verdict := "holds"
		if !l.Holds {
			verdict = "does not hold: " + l.Error
		}
		fmt.Fprintf(w, "    %-*s %s\n", width, l.Name, verdict)
	}
}

// safetySummaryLine is the summary's line of the safety property s, its name
// padded to width: the states violating it and its first violation.
func safetySummaryLine(s emulation.SafetyResult, width int) string {
	line := fmt.Sprintf("    %-*s %6d", width, s.Name, s.ViolatedStates)
	if s.ViolatedStates > 0 {
		line += fmt.Sprintf("  (%s, first at %s: %s — %s)",
			pluralOf(s.Episodes, "episode"), clock(s.FirstViolation), s.FirstEvent, s.FirstError)
	}
	return line
}

// speedFactor renders virtual over wall time: whole numbers from 10x up,
// two significant digits below, so a run slower than real time reads
// "0.25x", never "0x".
func speedFactor(x float64) string {
	if x >= 10 {
		return fmt.Sprintf("%.0fx", x)
	}
	return fmt.Sprintf("%.2gx", x)
}

// clock renders a virtual time offset as hh:mm:ss.mmm.
func clock(d time.Duration) string {
	h := d / time.Hour
	m := (d % time.Hour) / time.Minute
	s := (d % time.Minute) / time.Second
	ms := (d % time.Second) / time.Millisecond
	return fmt.Sprintf("%02d:%02d:%02d.%03d", h, m, s, ms)
}
