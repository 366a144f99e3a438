package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := mainErr(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if errors.Is(err, flag.ErrHelp) || errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// errUsage reports a bad command line.
var errUsage = errors.New("realbugs: usage")

// Plan is what the scoreboard runs on each bug and on the control.
type Plan struct {
	// Nodes is the cluster size of every run.
	Nodes int
	// CheckDepth and CheckStates bound the BFS; Walks and WalkDepth are
	// each walk stage's walks and their length.
	CheckDepth, CheckStates, Walks, WalkDepth int
	// Seeds are the emulated runs' seeds; Duration their virtual length;
	// Faults their fault flags.
	Seeds    []uint64
	Duration time.Duration
	Faults   []string
	// Online is how many of a bug's violating seeds also run with deep
	// online debugging (--mode debug) and with steering (--mode steer
	// --immediate), each for OnlineDuration or up to its first alarm
	// and Margin beyond, whichever is shorter.
	Online         int
	OnlineDuration time.Duration
	Margin         time.Duration
}

// Defaults of the plan: docs/RESULTS.md ("The library's own bugs").
const (
	defaultNodes          = 3
	defaultCheckDepth     = 10
	defaultCheckStates    = 60000
	defaultWalks          = 1000
	defaultWalkDepth      = 400
	defaultSeeds          = "1-10"
	defaultDuration       = 5 * time.Minute
	defaultFaults         = "--churn 4/m --crashes 1/m --crash-downtime 20s --msg-loss 0.02 --msg-duplicate 0.02 --msg-reorder 0.02"
	defaultOnline         = 1
	defaultOnlineDuration = 90 * time.Second
	defaultMargin         = 10 * time.Second
)

// minRun is the shortest emulated run the plan may ask for: emulate
// starts churn and crashes after a 30 s warm-up and heals for the last
// quarter of a run, so a shorter faulted run is refused.
const minRun = 41 * time.Second

func mainErr(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("realbugs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	p := Plan{}
	fs.IntVar(&p.Nodes, "nodes", defaultNodes, "nodes of every run")
	fs.IntVar(&p.CheckDepth, "check-depth", defaultCheckDepth, "depth bound of the BFS")
	fs.IntVar(&p.CheckStates, "check-states", defaultCheckStates, "unique-state bound of the BFS")
	fs.IntVar(&p.Walks, "walks", defaultWalks, "random walks of each walk stage")
	fs.IntVar(&p.WalkDepth, "walk-depth", defaultWalkDepth, "steps of a random walk")
	seeds := fs.String("seeds", defaultSeeds, "seeds of the emulated runs: comma-separated seeds and ranges")
	fs.DurationVar(&p.Duration, "duration", defaultDuration, "virtual length of an emulated run")
	faults := fs.String("faults", defaultFaults, "emulate fault flags of every run, space-separated")
	fs.IntVar(&p.Online, "online", defaultOnline, "violating seeds of a bug also run in --mode debug and --mode steer --immediate (0: none)")
	fs.DurationVar(&p.OnlineDuration, "online-duration", defaultOnlineDuration, "longest virtual length of an online run")
	fs.DurationVar(&p.Margin, "margin", defaultMargin, "an online run goes this far past the off run's first alarm")
	bugs := fs.String("bugs", "", "comma-separated names of the bugs to score (default: the whole corpus)")
	work := fs.String("work", "", "scratch directory (default: a new temporary directory, removed at the end)")
	repo := fs.String("repo", ".", "the crystalball repository examples/etcdraft is built from")
	jsonOut := fs.String("json", "", "also write the board as JSON to this file")
	list := fs.Bool("list", false, "list the corpus and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	if *list {
		for _, b := range Corpus {
			fmt.Fprintf(stdout, "%-38s %-10s %s\n", b.Name, b.Kind, b.Fix)
		}
		return nil
	}
	var err error
	if p.Seeds, err = parseSeeds(*seeds); err != nil {
		return err
	}
	p.Faults = strings.Fields(*faults)
	if err := p.validate(); err != nil {
		return err
	}
	chosen, err := selectBugs(*bugs)
	if err != nil {
		return err
	}
	dir, cleanup, err := scratch(*work)
	if err != nil {
		return err
	}
	defer cleanup()
	w, err := newWorkspace(ctx, *repo, dir)
	if err != nil {
		return err
	}
	b, err := score(ctx, w, p, chosen, stderr)
	if err != nil {
		return err
	}
	return b.write(stdout, *jsonOut)
}

// validate rejects a plan no run could follow.
func (p Plan) validate() error {
	switch {
	case p.Nodes < 1:
		return fmt.Errorf("%w: --nodes %d: at least 1", errUsage, p.Nodes)
	case p.CheckDepth < 1 || p.CheckStates < 1 || p.Walks < 1 || p.WalkDepth < 1:
		return fmt.Errorf("%w: --check-depth, --check-states, --walks and --walk-depth must be positive", errUsage)
	case p.Duration < minRun || p.OnlineDuration < minRun || p.Margin < 0:
		return fmt.Errorf("%w: --duration and --online-duration must be at least %v (the emulator's warm-up and healing), --margin not negative", errUsage, minRun)
	case p.Online < 0:
		return fmt.Errorf("%w: --online %d: not negative", errUsage, p.Online)
	}
	return nil
}

// selectBugs returns the bugs a --bugs list names, in corpus order.
func selectBugs(list string) ([]Bug, error) {
	if list == "" {
		return Corpus, nil
	}
	names := strings.Split(list, ",")
	var out []Bug
	for _, b := range Corpus {
		if slices.Contains(names, b.Name) {
			out = append(out, b)
		}
	}
	for _, n := range names {
		if !slices.ContainsFunc(Corpus, func(b Bug) bool { return b.Name == n }) {
			return nil, fmt.Errorf("%w: --bugs: no bug %q in the corpus (realbugs --list)", errUsage, n)
		}
	}
	return out, nil
}

// parseSeeds parses "1-10" or "1,4,7-9".
func parseSeeds(s string) ([]uint64, error) {
	var out []uint64
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.ParseUint(lo, 10, 64)
		b := a
		if err == nil && isRange {
			b, err = strconv.ParseUint(hi, 10, 64)
		}
		if err != nil || b < a || b-a > 10000 {
			return nil, fmt.Errorf("%w: --seeds %q: want seeds and ranges such as 1-10,12", errUsage, s)
		}
		for x := a; x <= b; x++ {
			out = append(out, x)
		}
	}
	return out, nil
}

// scratch returns the scratch directory and what removes it.
func scratch(dir string) (string, func(), error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", nil, fmt.Errorf("realbugs: %w", err)
		}
		return dir, func() {}, nil
	}
	d, err := os.MkdirTemp("", "realbugs-")
	if err != nil {
		return "", nil, fmt.Errorf("realbugs: %w", err)
	}
	return d, func() { os.RemoveAll(d) }, nil
}
