package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	reg := DefaultRegistry()
	err := mainErr(ctx, reg, os.Args[1:], os.Stdout, os.Stderr)
	if cerr := reg.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		if errors.Is(err, errUsage) || errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// Defaults of the flags: the baseline of docs/RESULTS.md ("Steering and
// liveness on services written from the README").
const (
	defaultServices = "permits@3,permits:all@3,commit,commit:all,mutex,lock"
	defaultSeeds    = "1-12"
	defaultNodes    = 5
	defaultDuration = "10m"
	defaultChurn    = "1/m"
	defaultBreaks   = "2/m"
)

// mainErr parses the command line, runs the plan it describes and prints
// the report: the tables, then one JSON line of totals.
func mainErr(ctx context.Context, reg *Registry, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("steerlive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	services := fs.String("services", defaultServices, "targets: comma-separated NAME[:FIX][@NODES] (FIX: the run's --fix, NODES its --nodes)")
	seeds := fs.String("seeds", defaultSeeds, "seeds: comma-separated seeds and ranges (1-12)")
	modes := fs.String("modes", strings.Join([]string{string(Off), string(Immediate), string(Steer)}, ","), "modes to compare, off included")
	nodes := fs.Int("nodes", defaultNodes, "nodes of a target that names none")
	var p Plan
	fs.StringVar(&p.Duration, "duration", defaultDuration, "emulate --duration of every run")
	fs.StringVar(&p.Churn, "churn", defaultChurn, "emulate --churn of every run")
	fs.StringVar(&p.Breaks, "breaks", defaultBreaks, "emulate --breaks of every run")
	extra := fs.String("emulate-flags", "", "further emulate flags of every run, space-separated")
	steerExtra := fs.String("steer-flags", "", "further emulate flags of the runs of every mode but off, space-separated")
	runsOut := fs.String("runs", "", "write every run's record (JSON lines) to this file")
	list := fs.Bool("list", false, "list the services and exit")
	quiet := fs.Bool("quiet", false, "no progress lines on standard error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if *list {
		in, progs := reg.Names()
		fmt.Fprintf(stdout, "in process: %s\nprograms: %s\n", strings.Join(in, ", "), strings.Join(progs, ", "))
		return nil
	}
	var err error
	if p.Targets, err = ParseTargets(*services, *nodes); err != nil {
		return err
	}
	for _, t := range p.Targets {
		if err := reg.check(t.Service); err != nil {
			return err
		}
	}
	if p.Seeds, err = ParseSeeds(*seeds); err != nil {
		return err
	}
	if p.Modes, err = ParseModes(*modes); err != nil {
		return err
	}
	p.Extra, p.SteerExtra = strings.Fields(*extra), strings.Fields(*steerExtra)
	var progress io.Writer
	if !*quiet {
		progress = stderr
	}
	runs, err := Measure(ctx, reg, p, progress)
	if err != nil {
		return err
	}
	if *runsOut != "" {
		if err := writeRuns(*runsOut, runs); err != nil {
			return err
		}
	}
	rep, err := Score(p, runs)
	if err != nil {
		return err
	}
	rep.Write(stdout, true)
	fmt.Fprintln(stdout)
	return json.NewEncoder(stdout).Encode(rep.Totals())
}

// Measure runs every run of the plan, one at a time, and returns their
// records; with progress set it prints a line per run there.
func Measure(ctx context.Context, reg *Registry, p Plan, progress io.Writer) ([]Record, error) {
	runs := make([]Record, 0, p.Runs())
	start := time.Now()
	for _, t := range p.Targets {
		for _, seed := range p.Seeds {
			for _, m := range p.Modes {
				if err := ctx.Err(); err != nil {
					return runs, err
				}
				r, err := runOne(ctx, reg, p, t, seed, m)
				if err != nil {
					return runs, err
				}
				runs = append(runs, r)
				if progress != nil {
					fmt.Fprintf(progress, "[%d/%d %s] %s seed %d %s: %d violating states, %d of %d properties held, %.2f%% changed, %.2fs wall\n",
						len(runs), p.Runs(), time.Since(start).Round(time.Second), t.Label(), seed, m,
						r.Violations, r.held(), len(r.Properties), r.ChangedPct(), r.WallSeconds)
				}
			}
		}
	}
	return runs, nil
}

// writeRuns writes the records to path, one JSON object a line.
func writeRuns(path string, runs []Record) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("steerlive: --runs: %w", err)
	}
	enc := json.NewEncoder(f)
	for _, r := range runs {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return fmt.Errorf("steerlive: --runs: %w", err)
		}
	}
	return f.Close()
}
