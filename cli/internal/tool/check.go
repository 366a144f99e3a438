package tool

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/report"
)

// checkFormat names the format of check --json's output, the report
// 'trace show' replays.
const checkFormat = "crystalball-check/1"

// checkOutput is the --json form of an offline check (MaceMC mode): what
// was checked, what the search cost and what it found.
type checkOutput struct {
	// Format is checkFormat.
	Format string `json:"format"`
	// Target is the service's name (Service.Name), or the model's.
	Target   string `json:"target"`
	Options  string `json:"options"`
	Nodes    int    `json:"nodes"`
	Strategy string `json:"strategy"`
	Seed     uint64 `json:"seed"`
	Faults   string `json:"faults,omitempty"`
	// Weights are the walk weights by action kind that --weights auto
	// derived from an emulated run of the service (empty otherwise).
	Weights map[string]float64 `json:"weights,omitempty"`
	// Fix, Resets, Silent, Breaks, Drops and Refusals are the flags the
	// service's model was built with, so that 'trace show' can rebuild it.
	Fix      string `json:"fix,omitempty"`
	Resets   int    `json:"resets,omitempty"`
	Silent   bool   `json:"silent,omitempty"`
	Breaks   int    `json:"breaks,omitempty"`
	Drops    int    `json:"drops,omitempty"`
	Refusals int    `json:"refusals,omitempty"`
	// Lasting is the lasting faults and the timer skew (absent: none).
	Lasting   *report.Lasting `json:"lasting,omitempty"`
	Stop      string          `json:"stop,omitempty"`
	Unique    uint64          `json:"unique"`
	Generated uint64          `json:"generated"`
	Pruned    uint64          `json:"pruned"`
	// Slept counts the transitions partial-order reduction skipped
	// (--por, BFS only).
	Slept uint64 `json:"slept,omitempty"`
	// SleepSetsOff is the first depth expanded without sleep sets because
	// they did not pay (consequence.Result.SleepSetsOff; 0: not switched off).
	SleepSetsOff    int      `json:"sleep_sets_off,omitempty"`
	Depth           int      `json:"depth"`
	DepthCounts     []uint64 `json:"depth_counts,omitempty"`
	StatesPerSecond float64  `json:"states_per_second"`
	BytesPerState   float64  `json:"bytes_per_state"`
	MemoryBytes     uint64   `json:"memory_bytes"`
	// PeakMemoryBytes is the most memory the Go heap held from the system
	// at the search's checks of --max-memory (0 without it).
	PeakMemoryBytes uint64 `json:"peak_memory_bytes,omitempty"`
	// OmissionProbability is the search's estimate that it confused two
	// states' fingerprints (consequence.Result.OmissionProbability).
	OmissionProbability float64          `json:"omission_probability"`
	WallSeconds         float64          `json:"wall_seconds"`
	Violations          []checkViolation `json:"violations"`
	Liveness            *livenessOutput  `json:"liveness,omitempty"`
	// Reports are the violations of a service check as replayable
	// consequence.ActorReports.
	Reports []json.RawMessage `json:"reports,omitempty"`
	// Confirmed are the directed runs' verdicts on Violations, in order
	// (--confirm).
	Confirmed []emulation.PathJudgement `json:"confirmed,omitempty"`

	// Losses, Duplicates and Reorders are the delivery-fault budgets
	// (--losses, --duplicates, --reorders), Delays the late messages'
	// (--delays).
	Losses     int `json:"losses,omitempty"`
	Duplicates int `json:"duplicates,omitempty"`
	Reorders   int `json:"reorders,omitempty"`
	Delays     int `json:"delays,omitempty"`
	// From is the --from file, Start the snapshot it held (the model's
	// start state) and StartArrivals its report's bound of arrivals.
	From          string           `json:"from,omitempty"`
	Start         *report.Snapshot `json:"start,omitempty"`
	StartArrivals int              `json:"start_arrivals,omitempty"`
}

type checkViolation struct {
	Property string   `json:"property"`
	Kind     string   `json:"kind"`
	Error    string   `json:"error"`
	Depth    int      `json:"depth"`
	Path     []string `json:"path"`
}

type livenessOutput struct {
	Walks int `json:"walks"`
	Live  int `json:"live"`
	// Periphery is the number of states of the bounded search's deepest
	// level the second half of the walks started from (0: walks from the
	// start state only); PeripheryDepth is that level.
	Periphery      int `json:"periphery"`
	PeripheryDepth int `json:"periphery_depth"`
	// Suspects is the number of suspects whose critical transition was
	// searched, C2 how many were judged C2 and passed over (--suspects).
	Suspects int      `json:"suspects"`
	C2       int      `json:"c2"`
	Suspect  []string `json:"suspect,omitempty"`
	Failing  []string `json:"failing,omitempty"`
	Verdict  string   `json:"verdict,omitempty"`
	Critical int      `json:"critical_step"`
	Action   string   `json:"critical_action,omitempty"`
	LivePath []string `json:"live_path,omitempty"`
	// Report is the suspect as a replayable consequence.ActorReport
	// (kind "liveness"; property and error: the first liveness property
	// failing at its end), its path from the model's start state: a walk
	// from a periphery state is prefixed with that state's path. Nil
	// when no walk was a suspect. 'trace show' replays it.
	Report *consequence.ActorReport `json:"report,omitempty"`
	// DeadEnd is the suspect's critical-transition search as the
	// prediction reports carry it, its CriticalStep 1-based within
	// Report.Path (0 when there is none: the start state is dead, or the
	// verdict is C2) and its LivePath the nearest live path as replayable
	// records, from the model's start state too. Set with Report.
	DeadEnd *report.DeadEnd `json:"dead_end,omitempty"`
	// Confirmed is a directed run's verdict on a C1 suspect (--confirm):
	// forced up to its critical transition, then running on.
	Confirmed *emulation.PathJudgement `json:"confirmed,omitempty"`
}

// maxCheckNodes bounds 'check --nodes' and the node count 'trace show'
// trusts in check's output. Every explored state holds every node and
// each successor copies the node list, so the first level of a search of
// n nodes allocates about n² pointers: at 65,536 nodes that is 34 GB
// before the first budget check could run. The papers check 3 to 5 nodes.
const maxCheckNodes = 1024

// checkFlags are the flags of 'crystalball check'.
type checkFlags struct {
	service, model, strategy, fix, weights           string
	resetKinds                                       string
	nodes, maxDepth, maxStates, resets, breaks       int
	drops, refusals                                  int
	fullDepth                                        int
	walks, dmax, dinit, periphery, workers, suspects int
	budget                                           time.Duration
	maxMemory                                        int64
	seed                                             uint64
	silent, asJSON, por, symmetry                    bool
	weight                                           map[consequence.ActorActionKind]float64 // parsed --weights
	autoWeights                                      bool                                    // --weights auto
	walk                                             bool                                    // --strategy walk
	strat                                            consequence.Strategy                    // the others
	// models are the builders of the program's models (Model.Flags), by
	// name: their flags are check's too.
	models map[string]func(symmetry bool) (*ModelSearch, error)

	// delivery are the delivery-fault budgets (delivery_flags.go).
	delivery checkDeliveryFlags
	// verifyEvery is --verify-determinism (check_determinism.go); quiet
	// is --quiet.
	verifyEvery int
	quiet       bool
	// from is --from (check_from.go); set names the flags the command
	// line set.
	from string
	set  map[string]bool
	// lasting are the lasting faults and the timer skew (lasting_flags.go).
	lasting lastingCheckFlags
	// ship is --ship (check_ship.go).
	ship string
	// confirm is --confirm (check_confirm.go); judge its judge of the
	// service checked (nil: off).
	confirm checkConfirmFlags
	judge   *pathJudge
}

// register defines f's flags on fs.
func (f *checkFlags) register(fs *flag.FlagSet, cat *catalog) {
	fs.StringVar(&f.service, "service", cat.defaultName(), "service to check from its initial state ("+cat.list()+")")
	fs.StringVar(&f.model, "model", "", "check a hand-written model instead of a service ("+cat.modelNames()+")")
	fs.IntVar(&f.nodes, "nodes", 5, "number of service nodes (IDs 1..N)")
	f.models = make(map[string]func(bool) (*ModelSearch, error), len(cat.models))
	for _, m := range cat.models {
		f.models[m.Name] = m.Flags(fs)
	}
	fs.StringVar(&f.strategy, "strategy", "bfs", "search strategy: bfs, consequence or walk")
	fs.IntVar(&f.maxDepth, "max-depth", 0, "depth budget (0: none)")
	fs.IntVar(&f.fullDepth, "full-depth", 0, "strategy consequence: expand every timer and application call in the states of the first N levels, Fig. 8's pruning below (a steering round's near-future search)")
	fs.IntVar(&f.maxStates, "max-states", 1_000_000, "budget of unique states (0: none)")
	f.budget = 30 * time.Second
	fs.Var(byteSize{&f.maxMemory}, "max-memory", "memory budget of the search, e.g. 4GiB: it stops with \"memory budget\" before the process holds more (also the Go runtime's soft memory limit; 0: none)")
	fs.Var(durationValue{&f.budget}, "budget", "wall-time budget (e.g. 30s; 0: none)")
	fs.IntVar(&f.resets, "resets", 0, "node resets allowed along a path")
	fs.BoolVar(&f.silent, "silent", false, "resets are silent (the RST is lost)")
	fs.StringVar(&f.resetKinds, "reset-kinds", "", "kinds of reset one search explores: rst, silent or both (default: silent with --silent, else rst)")
	fs.IntVar(&f.breaks, "breaks", 0, "connection breaks allowed along a path")
	fs.IntVar(&f.drops, "drops", 0, "datagrams dropped along a path")
	fs.IntVar(&f.refusals, "refusals", 0, "sends refused along a path (messages sent with TrySend that the transport may refuse)")
	f.lasting.register(fs)
	fs.StringVar(&f.fix, "fix", "", cat.fixHelp())
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the node random sources and the random walks")
	fs.IntVar(&f.walks, "walks", 100, "random walks (strategy walk)")
	fs.IntVar(&f.dmax, "dmax", 500, "steps per random walk (strategy walk)")
	fs.IntVar(&f.suspects, "suspects", consequence.DefaultMaxSuspects, "suspects whose critical transition is searched before giving up on a C1 verdict (strategy walk; 1: stop at the first)")
	fs.StringVar(&f.weights, "weights", "", "strategy walk: bias the walks by action kind, MaceMC-style: comma-separated KIND=W, KIND one of "+strings.Join(weightKindNames(), ", ")+" (unlisted kinds weigh 1, 0 excludes a kind); auto derives them from a minute of the service emulated with the same nodes and seed (the rates it shows, steering.EventRates.WalkWeights)")
	fs.IntVar(&f.dinit, "dinit", 0, "steps before a walk may count as live (strategy walk)")
	fs.IntVar(&f.periphery, "periphery", 16, "strategy walk with --max-depth: also walk from this many states where a BFS bounded by --max-depth and --budget left off")
	fs.IntVar(&f.workers, "workers", 0, "search goroutines (0: every core)")
	fs.BoolVar(&f.por, "por", true, "strategy bfs: partial-order reduction (sleep sets): the same states and violations from fewer transitions; --por=false takes every transition")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object instead of the summary")
	f.delivery.register(fs)
	f.registerFrom(fs)
	f.registerDeterminism(fs)
	f.registerShip(fs)
	f.confirm.register(fs)
	fs.BoolVar(&f.symmetry, "symmetry", false, "symmetry reduction: keep one state per orbit under renamings of the nodes the model declares interchangeable (a model: those it declares; a service: its node.Symmetric groups, an error if it declares none); sound for properties that do not name those nodes")
}

// check validates f and resolves the strategy, one group of flags after
// the other.
func (f *checkFlags) check() error {
	return firstFailingStep(
		f.checkBudgets,
		f.delivery.validate,
		f.checkVerifyEvery,
		func() error { return f.confirm.validate(f) },
		f.checkFromService,
		f.resolveWeights,
		f.checkResetKinds,
		func() error { _, err := f.lasting.faults(consequence.Faults{}); return err },
		f.resolveStrategy,
		f.validateShip,
	)
}

// budgetsInRange reports whether the budgets, fault counts and walk
// parameters are not negative, and --walks and --dmax positive.
func (f *checkFlags) budgetsInRange() bool {
	return rangeRulesHold(
		rangeRule{int64(f.maxDepth), 0}, rangeRule{int64(f.fullDepth), 0}, rangeRule{int64(f.maxStates), 0},
		rangeRule{int64(f.budget), 0}, rangeRule{int64(f.resets), 0}, rangeRule{int64(f.breaks), 0},
		rangeRule{int64(f.drops), 0}, rangeRule{int64(f.refusals), 0}, rangeRule{int64(f.walks), 1},
		rangeRule{int64(f.dmax), 1}, rangeRule{int64(f.dinit), 0}, rangeRule{int64(f.workers), 0},
		rangeRule{int64(f.periphery), 0},
	)
}

// checkBudgets checks the search's budgets and walk parameters.
func (f *checkFlags) checkBudgets() error {
	return FirstBrokenRule(
		UsageRule{!f.budgetsInRange(), usagef("budgets, fault counts and walk parameters must not be negative (walks and dmax positive)")},
		UsageRule{f.suspects <= 0, usagef("--suspects must be positive, got %d", f.suspects)},
	)
}

// checkVerifyEvery checks --verify-determinism.
func (f *checkFlags) checkVerifyEvery() error {
	if f.verifyEvery < 0 {
		return usagef("--verify-determinism must not be negative (0: no check), got %d", f.verifyEvery)
	}
	return nil
}

// checkFromService refuses --from with --model: a start state is a
// service's.
func (f *checkFlags) checkFromService() error {
	if f.from != "" && f.model != "" {
		return usagef("--from starts a service's search, not --model %s's", f.model)
	}
	return nil
}

// resolveWeights parses --weights, unless it is auto (derived later from
// an emulated run).
func (f *checkFlags) resolveWeights() error {
	f.autoWeights = f.weights == "auto"
	if f.autoWeights {
		f.weight = nil
		return nil
	}
	w, err := parseWeights(f.weights)
	f.weight = w
	return err
}

// checkResetKinds checks --reset-kinds (empty: chosen by --silent).
func (f *checkFlags) checkResetKinds() error {
	if f.resetKinds == "" {
		return nil
	}
	if _, err := consequence.ParseResetKinds(f.resetKinds); err != nil {
		return usagef("--reset-kinds: %q is not rst, silent or both", f.resetKinds)
	}
	return nil
}

// resolveStrategy parses --strategy: walk, or a search strategy.
func (f *checkFlags) resolveStrategy() error {
	f.walk = f.strategy == "walk"
	if f.walk {
		return nil
	}
	s, err := consequence.ParseStrategy(f.strategy)
	if err != nil {
		return usagef("--strategy: %q is not bfs, consequence or walk", f.strategy)
	}
	f.strat = s
	return nil
}

// walkOptions are the liveness search's options for seed.
func (f *checkFlags) walkOptions(seed uint64) consequence.LivenessOptions[consequence.ActorAction] {
	var weight func(consequence.Action[consequence.ActorAction]) float64
	if f.weight != nil {
		weight = consequence.KindWeights(f.weight)
	}
	return consequence.LivenessOptions[consequence.ActorAction]{
		Walk:        consequence.WalkOptions[consequence.ActorAction]{Seed: seed, Walks: f.walks, DMax: f.dmax, DInit: f.dinit, Weight: weight},
		MaxSuspects: f.suspects,
	}
}

// deriveWeights sets f's walk weights from a short emulated run of svc
// with f's nodes and seed (--weights auto) and records them in out.
func (f *checkFlags) deriveWeights(ctx context.Context, svc serviceRun, out *checkOutput) error {
	w, _, err := emulation.WalkWeights(ctx, emulation.Config{Spec: svc.spec, Nodes: f.nodes, Seed: f.seed, Workload: svc.workload})
	if err != nil {
		return fmt.Errorf("--weights auto: %w", err)
	}
	f.weight = w
	out.Weights = make(map[string]float64, len(w))
	for _, k := range weightKinds {
		if x, ok := w[k.kind]; ok {
			out.Weights[k.name] = x
		}
	}
	return nil
}

// weightKind is an action kind of the actor model and its name in
// --weights.
type weightKind struct {
	name string
	kind consequence.ActorActionKind
}

// weightKinds names the actor model's action kinds for --weights.
var weightKinds = []weightKind{
	{"deliver", consequence.ActDeliver},
	{"timer", consequence.ActTimer},
	{"app", consequence.ActApp},
	{"reset", consequence.ActReset},
	{"break", consequence.ActBreak},
	{"datagram", consequence.ActDeliverDatagram},
	{"drop", consequence.ActDropDatagram},
	{"refuse", consequence.ActRefuse},
	{"lose", consequence.ActLose},
	{"duplicate", consequence.ActDuplicate},
	{"deliver-ahead", consequence.ActDeliverAhead},
	{"delay", consequence.ActDelay},
	{"crash", consequence.ActCrash},
	{"restart", consequence.ActRestart},
	{"partition", consequence.ActPartition},
	{"heal", consequence.ActHeal},
	{"clock-jump", consequence.ActClockJump},
}

func weightKindNames() []string {
	out := make([]string, len(weightKinds))
	for i, k := range weightKinds {
		out[i] = k.name
	}
	return out
}

// parseWeights parses --weights ("reset=0.01,timer=0.5"); nil for "".
func parseWeights(s string) (map[consequence.ActorActionKind]float64, error) {
	if s == "" {
		return nil, nil
	}
	out := map[consequence.ActorActionKind]float64{}
	for _, item := range strings.Split(s, ",") {
		kind, x, err := parseWeight(item)
		if err != nil {
			return nil, err
		}
		out[kind] = x
	}
	return out, nil
}

// parseWeight parses one KIND=W item of --weights.
func parseWeight(item string) (consequence.ActorActionKind, float64, error) {
	name, val, ok := strings.Cut(item, "=")
	x, err := strconv.ParseFloat(val, 64)
	if !ok || err != nil || !(x >= 0) || math.IsInf(x, 1) {
		return 0, 0, usagef("--weights: %q is not KIND=W with W a finite number >= 0", item)
	}
	i := slices.IndexFunc(weightKinds, func(k weightKind) bool { return k.name == name })
	if i < 0 {
		return 0, 0, usagef("--weights: unknown kind %q (want one of %s)", name, strings.Join(weightKindNames(), ", "))
	}
	return weightKinds[i].kind, x, nil
}

func runCheck(cat *catalog, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("check", stderr)
	f := &checkFlags{}
	f.register(fs, cat)
	setUsage(fs, "check [flags]", "Explores a service (from its initial state) or a model and reports property violations.")
	if err := firstFailingStep(
		func() error { return parseFlags(fs, args) },
		func() error { f.set = setFlags(fs); return f.check() },
	); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opts := consequence.Options{Strategy: f.strat, Workers: f.workers, MaxStates: f.maxStates, MaxDepth: f.maxDepth, FullDepth: f.fullDepth, MaxTime: f.budget, DisablePOR: !f.por, MaxMemory: f.maxMemory}
	if f.maxMemory > 0 {
		// The collector works harder as the heap nears the budget instead of
		// letting garbage double it (GOGC); the process runs this one search.
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(f.maxMemory))
	}
	progress := newProgressMode(stderr, "", progressModeOf(stderr, f.quiet), f.showsLevels())
	opts.Progress = progress.level
	endProgress := progress.close
	defer progress.close()
	var restoreGC func()
	opts.Progress, restoreGC = searchGCPercent(f.gcPercent(), opts.Progress)
	defer restoreGC()
	out, err := f.explore(ctx, cat, opts)
	endProgress()
	if err != nil && !out.hasResult() {
		return err
	}
	if f.asJSON {
		return encodeJSONOr(stdout, out, err)
	}
	printCheckSummary(stdout, out)
	return err
}

// showsLevels reports whether the progress shows the search's levels:
// not with --json or --quiet, nor for walks without a bounded search.
func (f *checkFlags) showsLevels() bool {
	return !f.asJSON && !f.quiet && (!f.walk || f.maxDepth > 0)
}

// gcPercent is the collector's least target for the search f asks for
// (searchGCPercent).
func (f *checkFlags) gcPercent() int {
	if f.model != "" {
		return modelGCPercent
	}
	return serviceGCPercent
}

// explore runs the check f asks for: of --model, or of --service.
func (f *checkFlags) explore(ctx context.Context, cat *catalog, opts consequence.Options) (checkOutput, error) {
	if f.model == "" {
		return checkService(ctx, cat, f, opts)
	}
	return checkModel(ctx, f, opts)
}

// hasResult reports whether o holds a search's result (a stop or the
// walks' outcome), printed even when the search ended in an error.
func (o checkOutput) hasResult() bool {
	return o.Stop != "" || o.Liveness != nil
}

// checkService explores the service f names from its initial state with
// opts (or random walks). An error with a result (out.Stop or
// out.Liveness set) is the search's: the result is still printed.
func checkService(ctx context.Context, cat *catalog, f *checkFlags, opts consequence.Options) (checkOutput, error) {
	from, svc, err := f.serviceToCheck(cat)
	if err != nil {
		return checkOutput{}, err
	}
	faults := f.serviceFaults()
	m, err := f.serviceActorModel(from, svc, faults)
	if err != nil {
		return checkOutput{}, err
	}
	out := f.serviceOutput(svc, faults, from)
	if f.walk {
		return checkServiceWalks(ctx, f, svc, opts, m, out)
	}
	return f.searchService(ctx, opts, m, out)
}

// serviceToCheck reads --from's start (nil without it), which may set
// the service flags, and looks up the service for --nodes nodes.
func (f *checkFlags) serviceToCheck(cat *catalog) (*report.Start, serviceRun, error) {
	from, err := f.readFrom()
	if err != nil {
		return nil, serviceRun{}, err
	}
	if f.nodes <= 0 || f.nodes > maxCheckNodes {
		return nil, serviceRun{}, usagef("--nodes must be in 1..%d, got %d: every explored state holds every node and each successor copies them, so a search over more nodes exhausts memory in its first levels (exhaustive checking suits 3 to a few tens of nodes)", maxCheckNodes, f.nodes)
	}
	svc, err := cat.lookup(f.service, SplitList(f.fix), f.nodes)
	return from, svc, err
}

// serviceFaults are the faults the flags allow along a path (checked by
// check()).
func (f *checkFlags) serviceFaults() consequence.Faults {
	faults := consequence.Faults{Resets: f.resets, SilentResets: f.silent, Breaks: f.breaks, Drops: f.drops, Refusals: f.refusals}
	if f.resetKinds != "" {
		faults.ResetKinds, _ = consequence.ParseResetKinds(f.resetKinds) // checked by check()
	}
	f.delivery.apply(&faults)
	faults, _ = f.lasting.faults(faults) // checked by check()
	return faults
}

// serviceActorModel is the actor model of svc with faults the check
// explores — from --from's start, else the initial configuration — with
// --verify-determinism and --symmetry; it also sets up --confirm's judge.
func (f *checkFlags) serviceActorModel(from *report.Start, svc serviceRun, faults consequence.Faults) (*consequence.ActorModel, error) {
	var m *consequence.ActorModel
	var err error
	if from != nil {
		m, err = f.fromModel(from, svc, faults)
	} else {
		m, err = serviceModelSkewed(svc, f.nodes, f.seed, faults, f.lasting.skew)
	}
	if err != nil {
		return nil, err
	}
	f.judge = f.confirm.newPathJudge(svc, f.nodes, f.seed, faults)
	if m, err = m.WithDeterminismCheck(f.verifyEvery); err != nil {
		return nil, err
	}
	if !f.symmetry {
		return m, nil
	}
	if m, err = m.WithSymmetry(); err != nil {
		return nil, usageError{err}
	}
	return m, nil
}

// serviceOutput is the output of a service check before its search: what
// is checked, with which faults, from which start.
func (f *checkFlags) serviceOutput(svc serviceRun, faults consequence.Faults, from *report.Start) checkOutput {
	out := checkOutput{Format: checkFormat, Target: f.service, Options: svc.options, Nodes: f.nodes, Seed: f.seed,
		Faults: fmt.Sprintf("resets=%d kinds=%v breaks=%d", f.resets, faults.Kinds(), f.breaks),
		Fix:    f.fix, Resets: f.resets, Silent: f.silent, Breaks: f.breaks, Drops: f.drops, Refusals: f.refusals}
	out.Faults += summaryClause(f.drops > 0, " drops=%d", f.drops)
	out.Faults += summaryClause(f.refusals > 0, " refusals=%d", f.refusals)
	out.Faults += f.delivery.describe()
	out.Losses, out.Duplicates, out.Reorders, out.Delays = f.delivery.losses, f.delivery.duplicates, f.delivery.reorders, f.delivery.delays
	if from != nil {
		checkStart(&out, f.from, from)
	}
	out.Faults += f.lasting.describe(faults)
	out.Lasting = report.LastingOf(faults, f.lasting.skew)
	return out
}

// searchService runs the bounded search of m (bfs or consequence) into
// out: its result, each violation as a replayable report judged by
// --confirm, and the filters --ship writes.
func (f *checkFlags) searchService(ctx context.Context, opts consequence.Options, m *consequence.ActorModel, out checkOutput) (checkOutput, error) {
	res, err := consequence.NewChecker[*consequence.GlobalState, consequence.ActorAction](m).
		Properties(m.Properties()...).WithOptions(opts).Run(ctx)
	if res == nil {
		return out, err
	}
	fillResult(&out, res)
	for _, v := range res.Violations {
		if rerr := appendReport(&out, m, v); rerr != nil {
			return checkOutput{}, rerr
		}
		if cerr := f.confirmViolation(ctx, &out, v.Path, v.Property, v.Kind); cerr != nil {
			return out, cerr
		}
	}
	if f.ship != "" {
		if serr := f.writeShipped(res); serr != nil {
			return out, serr
		}
	}
	return out, err
}

// appendReport appends violation v of m to out's reports, as a
// replayable consequence.ActorReport.
func appendReport(out *checkOutput, m *consequence.ActorModel, v consequence.Violation[*consequence.GlobalState, consequence.ActorAction]) error {
	rep, err := m.Report(v)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(rep)
	out.Reports = append(out.Reports, b)
	return nil
}

// checkServiceWalks runs the random walks of 'check --strategy walk' on m
// (after a bounded search with --max-depth), within --budget: the budget
// is a deadline on the walks' context, since walks read no clock, and
// running out of it is a result (out.Stop "time budget" with the walks
// taken so far), not an error, as for the other strategies. With
// --weights auto, the weights come first from an emulated run of svc.
func checkServiceWalks(ctx context.Context, f *checkFlags, svc serviceRun, opts consequence.Options, m *consequence.ActorModel, out checkOutput) (checkOutput, error) {
	if f.autoWeights {
		if err := f.deriveWeights(ctx, svc, &out); err != nil {
			return out, err
		}
	}
	out.Strategy = "walk"
	walkCtx, cancel := f.walkContext(ctx)
	defer cancel()
	from, err := f.peripheryStates(ctx, opts, m)
	if err != nil {
		return checkOutput{}, err
	}
	err = f.takeWalks(walkCtx, m, from, &out)
	if walksOutOfTime(ctx, walkCtx, err) {
		out.Stop, err = consequence.StopTimeBudget.String(), nil
	}
	return out, err
}

// walkContext is ctx with --budget as its deadline (none at 0). The
// bounded search before the walks has its own budget (opts.MaxTime) and
// stops at it without an error, so only the walks take this context.
func (f *checkFlags) walkContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if f.budget <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, f.budget)
}

// takeWalks takes the liveness walks of m from the start and the
// periphery states from, or the safety walks for a service without
// liveness properties, into out.
func (f *checkFlags) takeWalks(ctx context.Context, m *consequence.ActorModel, from []consequence.PathState[*consequence.GlobalState, consequence.ActorAction], out *checkOutput) error {
	if !hasLiveness(m.Properties()) {
		return checkSafetyWalks(ctx, f, m, out)
	}
	var err error
	out.Liveness, err = checkWalks(ctx, m, m.Properties(), from, f.walkOptions(f.seed), f.judge)
	return err
}

// walksOutOfTime reports whether the walks' error err is their deadline
// walkCtx ran out (--budget), not the end of ctx itself.
func walksOutOfTime(ctx, walkCtx context.Context, err error) bool {
	return err != nil && ctx.Err() == nil && errors.Is(walkCtx.Err(), context.DeadlineExceeded)
}

// peripheryStates are the states where a BFS bounded by --max-depth left
// off, for half of the walks to start from (none without --max-depth or
// with --periphery 0).
func (f *checkFlags) peripheryStates(ctx context.Context, opts consequence.Options, m *consequence.ActorModel) ([]consequence.PathState[*consequence.GlobalState, consequence.ActorAction], error) {
	if f.maxDepth <= 0 || f.periphery <= 0 {
		return nil, nil
	}
	bounded := opts
	bounded.Periphery = f.periphery
	res, err := consequence.NewChecker[*consequence.GlobalState, consequence.ActorAction](m).WithOptions(bounded).Run(ctx)
	if err != nil {
		return nil, err
	}
	return res.Periphery, nil
}

// checkSafetyWalks takes --walks random walks of up to --dmax steps from
// the start checking the safety and history properties at every step
// (consequence.SafetyWalks), for a service without liveness properties
// (a service with them takes the liveness walks, which check neither):
// the depth a bounded search cannot reach, covered sparsely. The first
// walk that reaches a violating state stops them and is reported as the
// violation, replayable like a search's. Bounded properties (node.Within)
// are left to the bounded search and to emulation: a walk is an
// adversarial schedule, along which a protocol whose progress is
// randomized (raft's elections) misses any bound with some probability,
// so a deep enough walk fails the bound on correct code.
func checkSafetyWalks(ctx context.Context, f *checkFlags, m *consequence.ActorModel, out *checkOutput) error {
	props := walkedProperties(m)
	if !hasSafety(props) {
		return nil
	}
	o := f.walkOptions(f.seed).Walk
	start := time.Now()
	res, err := consequence.SafetyWalks(ctx, m, props, o, 1)
	if res == nil {
		return err
	}
	// Unique counts the walks' steps (states are not deduplicated).
	out.Unique, out.Violations, out.Depth = uint64(res.Steps), []checkViolation{}, o.DMax
	out.WallSeconds, out.Stop = time.Since(start).Seconds(), fmt.Sprintf("%d safety walks", res.Walks)
	for _, u := range res.Unsafe {
		v := consequence.Violation[*consequence.GlobalState, consequence.ActorAction]{Property: u.Violation.Property,
			Kind: node.Safety, Err: u.Violation.Err, Depth: len(u.Path), Start: u.Start, Path: u.Path, State: u.State}
		cv := checkViolation{Property: v.Property, Kind: v.Kind.String(), Error: v.Err.Error(), Depth: v.Depth, Path: actionStrings(u.Path)}
		out.Violations = append(out.Violations, cv)
		if rerr := appendReport(out, m, v); rerr != nil {
			return rerr
		}
		if cerr := f.confirmViolation(ctx, out, u.Path, v.Property, node.Safety); cerr != nil {
			return cerr
		}
	}
	return err
}

// walkedProperties are the model's properties but the bounded ones.
func walkedProperties(m *consequence.ActorModel) []consequence.Property[*consequence.GlobalState] {
	bounded := map[string]bool{}
	for _, p := range m.Spec().Properties {
		bounded[p.Name] = p.Kind == node.Bounded
	}
	return slices.DeleteFunc(slices.Clone(m.Properties()), func(p consequence.Property[*consequence.GlobalState]) bool { return bounded[p.Name] })
}

// hasLiveness and hasSafety say whether props has a property of the kind.
func hasLiveness(props []consequence.Property[*consequence.GlobalState]) bool {
	return slices.ContainsFunc(props, func(p consequence.Property[*consequence.GlobalState]) bool { return p.Kind == node.Liveness })
}

func hasSafety(props []consequence.Property[*consequence.GlobalState]) bool {
	return slices.ContainsFunc(props, func(p consequence.Property[*consequence.GlobalState]) bool { return p.Kind == node.Safety })
}

// checkModel explores the program's model f.model with opts.
func checkModel(ctx context.Context, f *checkFlags, opts consequence.Options) (checkOutput, error) {
	build := f.models[f.model]
	switch {
	case build == nil && len(f.models) == 0:
		return checkOutput{}, usagef("unknown --model %q: this program has no model", f.model)
	case build == nil:
		return checkOutput{}, usagef("unknown --model %q (known: %s)", f.model, strings.Join(slices.Sorted(maps.Keys(f.models)), ", "))
	}
	if f.walk {
		return checkOutput{}, usagef("--strategy walk needs a service with liveness properties, not --model %s", f.model)
	}
	ms, err := build(f.symmetry)
	if err != nil {
		return checkOutput{}, usageError{err}
	}
	out := checkOutput{Format: checkFormat, Target: f.model, Options: ms.options, Nodes: ms.nodes, Seed: f.seed}
	err = ms.run(ctx, opts, &out)
	return out, err
}

// fillResult copies a search result into out.
func fillResult[S, A any](out *checkOutput, res *consequence.Result[S, A]) {
	out.Strategy = res.Strategy.String()
	out.Stop = res.Stop.String()
	out.Unique, out.Generated, out.Pruned, out.Slept = res.Unique, res.Generated, res.Pruned, res.Slept
	out.SleepSetsOff = res.SleepSetsOff
	out.Depth, out.DepthCounts = res.Depth, res.DepthCounts
	out.StatesPerSecond = res.StatesPerSecond()
	out.BytesPerState = res.BytesPerState()
	out.MemoryBytes = res.VisitedBytes + res.TraceBytes + res.LocalBytes
	out.PeakMemoryBytes = res.PeakMemory
	out.OmissionProbability = res.OmissionProbability
	out.WallSeconds = res.Elapsed.Seconds()
	out.Violations = []checkViolation{}
	for _, v := range res.Violations {
		cv := checkViolation{Property: v.Property, Kind: v.Kind.String(), Depth: v.Depth, Path: []string{}}
		if v.Err != nil {
			cv.Error = v.Err.Error()
		}
		for _, a := range v.Path {
			cv.Path = append(cv.Path, fmt.Sprint(a.Act))
		}
		out.Violations = append(out.Violations, cv)
	}
}

// checkWalks runs the random walks from the start state and then as many
// from the periphery states of a bounded search (MaceMC: walks begin where
// exhaustive search left off), searching each suspect's critical
// transition; it passes over suspects judged C2 (often slow convergence)
// until one is judged C1 or --suspects of them were judged, and reports the
// C1, else the first suspect.
func checkWalks(ctx context.Context, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], periphery []consequence.PathState[*consequence.GlobalState, consequence.ActorAction], o consequence.LivenessOptions[consequence.ActorAction], judge *pathJudge) (*livenessOutput, error) {
	res, err := consequence.FindLivenessViolation(ctx, m, props, periphery, o)
	if res == nil {
		return nil, err
	}
	out := &livenessOutput{Walks: res.Walks, Live: res.Live, Critical: -1, Periphery: len(periphery), Suspects: res.Suspects, C2: res.C2}
	if len(periphery) > 0 {
		out.PeripheryDepth = len(periphery[0].Path)
	}
	if res.Suspect == nil || res.Critical == nil {
		return out, err // err: the walks stopped early; out counts those taken
	}
	describeSuspect(out, res)
	if rerr := replayableSuspect(m, out, res, periphery); rerr != nil {
		return out, rerr
	}
	if jerr := judgeSuspect(ctx, judge, out, res, periphery); jerr != nil {
		return out, jerr
	}
	return out, err
}

// describeSuspect fills out with res's suspect: its path, the properties
// failing at its end, the verdict and the critical transition.
func describeSuspect(out *livenessOutput, res *consequence.LivenessResult[*consequence.GlobalState, consequence.ActorAction]) {
	out.Suspect = actionStrings(res.Suspect.Path)
	for _, f := range res.Suspect.Failing {
		out.Failing = append(out.Failing, f.Property+": "+f.Err.Error())
	}
	crit := res.Critical
	out.Verdict, out.Critical = crit.Verdict.String(), crit.Step
	if crit.Step >= 0 {
		out.Action = crit.Action.Act.String()
		out.LivePath = actionStrings(crit.LivePath)
	}
}

// judgeSuspect judges a C1 suspect with a critical transition and a
// failing property by a directed run up to that transition (--confirm;
// nothing without a judge) into out.Confirmed.
func judgeSuspect(ctx context.Context, judge *pathJudge, out *livenessOutput, res *consequence.LivenessResult[*consequence.GlobalState, consequence.ActorAction], periphery []consequence.PathState[*consequence.GlobalState, consequence.ActorAction]) error {
	crit, s := res.Critical, res.Suspect
	if judge == nil || !isJudgeableC1(crit, s) {
		return nil
	}
	path := append(slices.Clone(suspectPrefix(s, periphery)), s.Path[:crit.Step+1]...)
	j, err := judge.judge(ctx, path, s.Failing[0].Property, node.Liveness)
	if err != nil {
		return err
	}
	out.Confirmed = &j
	return nil
}

// isJudgeableC1 reports whether a directed run can judge the suspect s:
// judged C1 at a critical step, with a property failing at its end.
func isJudgeableC1(crit *consequence.Critical[*consequence.GlobalState, consequence.ActorAction], s *consequence.Walk[*consequence.GlobalState, consequence.ActorAction]) bool {
	return crit.Verdict == consequence.C1 && crit.Step >= 0 && len(s.Failing) > 0
}

// replayableSuspect fills out.Report and out.DeadEnd from res's suspect
// and its critical transition. A walk from a periphery state begins where
// the bounded search left off, so that state's path from the start is
// prefixed to the suspect and to the live path, and the critical step
// shifted by its length: the records replay from the model's start, as
// 'trace show' rebuilds it.
func replayableSuspect(m *consequence.ActorModel, out *livenessOutput, res *consequence.LivenessResult[*consequence.GlobalState, consequence.ActorAction], periphery []consequence.PathState[*consequence.GlobalState, consequence.ActorAction]) error {
	s, crit := res.Suspect, res.Critical
	prefix := suspectPrefix(s, periphery)
	path, err := records(m, prefix, s.Path)
	if err != nil {
		return fmt.Errorf("check: recording the suspect: %w", err)
	}
	rep := &consequence.ActorReport{Kind: node.Liveness.String(), Depth: len(path), Fingerprint: m.Fingerprint(s.State).String(), Path: path}
	if len(s.Failing) > 0 {
		rep.Property, rep.Error = s.Failing[0].Property, s.Failing[0].Err.Error()
	}
	d := &report.DeadEnd{Verdict: crit.Verdict.String(), Failing: out.Failing, Walks: res.Walks, Live: res.Live, Probes: crit.Probes}
	if crit.Step >= 0 && crit.Verdict == consequence.C1 {
		d.CriticalStep = len(prefix) + crit.Step + 1
		if d.LivePath, err = records(m, prefix, crit.LivePath); err != nil {
			return fmt.Errorf("check: recording the nearest live path: %w", err)
		}
	}
	out.Report, out.DeadEnd = rep, d
	return nil
}

// suspectPrefix is the path from the start state to the periphery state
// the suspect's walk began at (nil: it began at the start state).
func suspectPrefix(s *consequence.Walk[*consequence.GlobalState, consequence.ActorAction], periphery []consequence.PathState[*consequence.GlobalState, consequence.ActorAction]) consequence.Path[consequence.ActorAction] {
	for _, p := range periphery {
		if p.State == s.Start {
			return p.Path
		}
	}
	return nil
}

// records renders the actions of paths, one after the other, as
// replayable records.
func records(m *consequence.ActorModel, paths ...consequence.Path[consequence.ActorAction]) ([]consequence.ActionRecord, error) {
	var out []consequence.ActionRecord
	for _, p := range paths {
		for _, a := range p {
			r, err := m.Record(a.Act)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func actionStrings[A any](path []consequence.Action[A]) []string {
	out := make([]string, len(path))
	for i, a := range path {
		out[i] = fmt.Sprint(a.Act)
	}
	return out
}

// serviceModel is the actor model 'check' explores and 'trace show'
// rebuilds: the service's initial configuration of nodes 1..n with the
// CLI's workload.
func serviceModel(svc serviceRun, n int, seed uint64, faults consequence.Faults) (*consequence.ActorModel, error) {
	return serviceModelSkewed(svc, n, seed, faults, 0)
}

// serviceModelSkewed is serviceModel with a declared timer skew
// (consequence.ActorOptions.TimerSkew).
func serviceModelSkewed(svc serviceRun, n int, seed uint64, faults consequence.Faults, skew time.Duration) (*consequence.ActorModel, error) {
	return consequence.NewActorModel(svc.spec, consequence.ActorOptions{N: n, Seed: seed, Workload: svc.workload, Faults: faults, TimerSkew: skew})
}
