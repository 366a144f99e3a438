// Command zoo-scoreboard runs deep online debugging and execution steering
// on the bug zoo and prints the scoreboard (package scoreboard): for every
// case and seed, the planted bug and its fixed twin, each off, with
// --mode debug and with every node steering; predicted, predicted within
// 60 s, occurred, prevented and false positives.
//
//	go run ./examples/zoo/cmd/zoo-scoreboard                       # every case, seeds 1,2,3
//	go run ./examples/zoo/cmd/zoo-scoreboard --cases retry,lease --seeds 4
//	go run ./examples/zoo/cmd/zoo-scoreboard --json > scoreboard.json
//
// Progress goes to stderr, one line per run.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/cli"
	"github.com/seed6eee2ec7/crystalball/examples/zoo"
	"github.com/seed6eee2ec7/crystalball/examples/zoo/scoreboard"
)

// Exit statuses.
const (
	exitOK    = 0
	exitRun   = 1
	exitUsage = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], zoo.Cases(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command over the cases all, with its output on stdout and
// stderr; it returns the exit status.
func run(ctx context.Context, args []string, all []zoo.Case, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zoo-scoreboard", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seeds := fs.String("seeds", "1,2,3", "comma-separated seeds every case runs with")
	names := fs.String("cases", "", "comma-separated cases to run (default: every case of the zoo)")
	asJSON := fs.Bool("json", false, "print the scoreboard as one JSON object")
	duration := fs.Duration("duration", 0, "emulated time of every run (default: each case's own)")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	safetyWalks := fs.Int("safety-walks", 0, "random walks per steering round that check the safety properties (steering.Config.SafetyWalks; 0: none)")
	secondHop := fs.Int("second-hop", 0, "widen every gather to at most this many of the neighbours' neighbours (snapshot.Config.SecondHop; 0: the neighbourhood only)")
	hop := fs.Bool("immediate-hop", false, "the steer runs' immediate check follows an event's messages one hop (steering.Config.ImmediateHop)")
	recall := fs.Bool("recall-view", false, "a restarted node's gathers take in the nodes its restored check view holds (steering.Config.RecallView)")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "zoo-scoreboard: "+format+"\n", a...)
		return exitUsage
	}
	if fs.NArg() > 0 {
		return usage("unexpected argument %q", fs.Arg(0))
	}
	if len(all) == 0 {
		return usage("the zoo has no cases")
	}
	if *safetyWalks < 0 || *secondHop < 0 {
		return usage("--safety-walks and --second-hop must not be negative, got %d and %d", *safetyWalks, *secondHop)
	}
	cfg := scoreboard.Config{Duration: *duration, SafetyWalks: *safetyWalks, SecondHop: *secondHop, ImmediateHop: *hop, RecallView: *recall}
	var err error
	if cfg.Seeds, err = parseSeeds(*seeds); err != nil {
		return usage("--seeds: %v", err)
	}
	if cfg.Cases, err = pick(all, *names); err != nil {
		return usage("--cases: %v", err)
	}
	if *duration < 0 {
		return usage("--duration must not be negative, got %v", *duration)
	}
	prog := cli.StartProgress(stderr, *quiet, "zoo-scoreboard")
	defer prog.End()
	if !*quiet {
		lines := prog.LineWriter()
		cfg.OnRun = func(p scoreboard.Progress) { progress(lines, p) }
	}
	res, err := scoreboard.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "zoo-scoreboard: %v\n", err)
		return exitRun
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			fmt.Fprintf(stderr, "zoo-scoreboard: %v\n", err)
			return exitRun
		}
		return exitOK
	}
	fmt.Fprintln(stdout, res)
	return exitOK
}

// parseSeeds parses "1,2,3".
func parseSeeds(s string) ([]uint64, error) {
	var seeds []uint64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a seed (a non-negative integer)", f)
		}
		seeds = append(seeds, v)
	}
	return seeds, nil
}

// pick returns the cases of all that names lists, in its order (every
// case when names is empty).
func pick(all []zoo.Case, names string) ([]zoo.Case, error) {
	if names == "" {
		return all, nil
	}
	var out []zoo.Case
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		found := false
		for _, c := range all {
			if c.Name == n {
				out = append(out, c)
				found = true
				break
			}
		}
		if !found {
			known := make([]string, len(all))
			for i, c := range all {
				known[i] = c.Name
			}
			return nil, fmt.Errorf("unknown case %q (the zoo has %s)", n, strings.Join(known, ", "))
		}
	}
	return out, nil
}

// progress prints one run as it ends.
func progress(w io.Writer, p scoreboard.Progress) {
	variant := "bug"
	if p.Fixed {
		variant = "twin"
	}
	r := p.Result
	line := fmt.Sprintf("%s seed %d %s %s: %d violating states", p.Case, p.Seed, variant, p.Mode, r.Violations)
	if r.Predicted {
		line += fmt.Sprintf(", predicted at %v", r.FirstPrediction.Round(time.Millisecond))
	}
	fmt.Fprintln(w, line)
}
