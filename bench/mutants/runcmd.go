package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seed6eee2ec7/crystalball/bench/mutants/mutate"
	"github.com/seed6eee2ec7/crystalball/bench/mutants/schema"
	"github.com/seed6eee2ec7/crystalball/cli"
	"github.com/seed6eee2ec7/crystalball/examples/zoo/scoreboard"
)

// runFlags are the run subcommand's settings.
type runFlags struct {
	manifest, sample, seeds, shard, jsonOut, svgOut, services, out string
	jobs, safetyWalks, secondHop                                   int
	quiet                                                          bool
}

// shardFormat names the JSON form of a shard's result file.
const shardFormat = "crystalball-mutants-shard/1"

// shardResult is one shard's raw results: what 'run --shard I/N' writes
// and 'merge' reads. Digest, Sample, Seeds and Services say what it ran;
// merge refuses shards that disagree or do not cover 0..N-1 once each.
type shardResult struct {
	Format    string     `json:"format"`
	Digest    string     `json:"digest"`
	Sample    string     `json:"sample"`
	Seeds     []uint64   `json:"seeds"`
	Services  string     `json:"services,omitempty"`
	Shard     int        `json:"shard"`
	Shards    int        `json:"shards"`
	Outcomes  []outcome  `json:"outcomes"`
	Baselines []baseline `json:"baselines"`
}

// runCmd runs the corpus (or a sample of it) and prints the scoreboard.
func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := newFlags("run", stderr)
	fs.StringVar(&f.manifest, "manifest", "bin/mutants/manifest.json", "the manifest gen wrote")
	fs.StringVar(&f.sample, "sample", "all", "which mutants: all, sample (every service, a few operators each) or short (the regression test's)")
	fs.StringVar(&f.seeds, "seeds", "1", "comma-separated emulation seeds")
	fs.StringVar(&f.services, "services", "", "comma-separated services to run (default: every one)")
	fs.IntVar(&f.jobs, "jobs", 1, "processes running mutants side by side (each one core)")
	fs.StringVar(&f.shard, "shard", "", "run shard I/N alone (every N-th mutant from the I-th, 0 <= I < N) and write its raw results to --out (default standard output), for 'mutants merge'")
	fs.StringVar(&f.out, "out", "", "with --shard: the result file to write")
	fs.StringVar(&f.jsonOut, "json", "", "write the scoreboard as JSON to this file")
	fs.StringVar(&f.svgOut, "svg", "", "write the plot of prediction-to-violation times to this SVG file")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
	fs.IntVar(&f.safetyWalks, "safety-walks", 0, "random walks per steering round that check the safety properties (steering.Config.SafetyWalks; 0: none)")
	fs.IntVar(&f.secondHop, "second-hop", 0, "widen every gather to at most this many of the neighbours' neighbours (snapshot.Config.SecondHop; 0: the neighbourhood only)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	seeds, err := parseSeeds(f.seeds)
	if err != nil {
		return err
	}
	if f.jobs < 1 {
		return fmt.Errorf("%w: --jobs must be at least 1, got %d", errUsage, f.jobs)
	}
	if f.safetyWalks < 0 || f.secondHop < 0 {
		return fmt.Errorf("%w: --safety-walks and --second-hop must not be negative, got %d and %d", errUsage, f.safetyWalks, f.secondHop)
	}
	man, err := openManifest(f.manifest)
	if err != nil {
		return err
	}
	if schema.Built != man.Digest {
		return fmt.Errorf("mutants: this program holds corpus %q, the manifest names %q: run the runner gen built (bin/mutants/run), after gen", schema.Built, man.Digest)
	}
	ms, err := sampleOf(man.Mutants, f.sample)
	if err != nil {
		return err
	}
	if ms, err = onlyServices(ms, f.services); err != nil {
		return err
	}
	if f.shard != "" {
		return runShard(ctx, f, man.Digest, ms, seeds, stdout, stderr)
	}
	start := time.Now()
	res, err := runShards(ctx, f, len(ms), stderr)
	if err != nil {
		return err
	}
	b := tallyBoard(man, f.sample, seeds, res)
	b.WallSeconds = time.Since(start).Seconds()
	return b.write(f, stdout)
}

// parseSeeds parses a comma-separated list of seeds.
func parseSeeds(s string) ([]uint64, error) {
	var out []uint64
	for _, x := range strings.Split(s, ",") {
		v, err := strconv.ParseUint(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: bad seed %q in --seeds", errUsage, x)
		}
		out = append(out, v)
	}
	return out, nil
}

// runShards runs f.jobs child processes, shard i/jobs each, and merges
// their results.
func runShards(ctx context.Context, f runFlags, n int, stderr io.Writer) (shardResult, error) {
	var (
		mu  sync.Mutex
		all shardResult
		wg  sync.WaitGroup
	)
	errs := make([]error, f.jobs)
	exe, err := os.Executable()
	if err != nil {
		return all, fmt.Errorf("mutants: %w", err)
	}
	for i := range f.jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := []string{"run", "--manifest", f.manifest, "--sample", f.sample, "--seeds", f.seeds,
				"--services", f.services, "--shard", fmt.Sprintf("%d/%d", i, f.jobs), "--quiet=" + strconv.FormatBool(f.quiet),
				"--safety-walks", strconv.Itoa(f.safetyWalks), "--second-hop", strconv.Itoa(f.secondHop)}
			cmd := exec.CommandContext(ctx, exe, args...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, stderr
			if err := cmd.Run(); err != nil {
				errs[i] = fmt.Errorf("mutants: shard %d/%d: %w", i, f.jobs, err)
				return
			}
			var r shardResult
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				errs[i] = fmt.Errorf("mutants: shard %d/%d: %w", i, f.jobs, err)
				return
			}
			mu.Lock()
			all.Outcomes = append(all.Outcomes, r.Outcomes...)
			all.Baselines = append(all.Baselines, r.Baselines...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return all, err
		}
	}
	sortOutcomes(all.Outcomes)
	return all, nil
}

// sortOutcomes puts outcomes in mutant, then seed, order.
func sortOutcomes(os []outcome) {
	slices.SortFunc(os, func(a, b outcome) int {
		if a.Mutant.ID != b.Mutant.ID {
			return a.Mutant.ID - b.Mutant.ID
		}
		return cmp.Compare(a.Seed, b.Seed)
	})
}

// runShard runs shard i/n of ms (every n-th mutant from the i-th) with
// every seed, and the originals' debug runs of the services whose index
// is i modulo n, and prints the raw results as JSON.
func runShard(ctx context.Context, f runFlags, digest string, ms []mutate.Mutant, seeds []uint64, stdout, stderr io.Writer) error {
	var i, n int
	if _, err := fmt.Sscanf(f.shard, "%d/%d", &i, &n); err != nil || n < 1 || i < 0 || i >= n {
		return fmt.Errorf("%w: --shard must be I/N with 0 <= I < N, got %q", errUsage, f.shard)
	}
	deploys, err := deployments()
	if err != nil {
		return err
	}
	r := &runner{ctx: ctx, cfg: scoreboard.Config{Heal: heal, Duration: runDuration, MaxEvents: maxEvents, KeepPanics: true, SafetyWalks: f.safetyWalks, SecondHop: f.secondHop}, deploys: deploys, base: map[string]baseline{}, offline: map[string]offlineResult{}}
	prog := cli.StartProgress(stderr, f.quiet, fmt.Sprintf("mutants [%d/%d]", i, n))
	defer prog.End()
	if !f.quiet {
		lines := prog.LineWriter()
		r.onRun = func(what string, wall time.Duration) {
			fmt.Fprintf(lines, "mutants [%d/%d]: %s: %.1fs\n", i, n, what, wall.Seconds())
		}
	}
	res := shardResult{Format: shardFormat, Digest: digest, Sample: f.sample, Seeds: seeds, Services: f.services, Shard: i, Shards: n}
	for si, t := range mutate.DefaultTargets() {
		if si%n != i || !slices.ContainsFunc(ms, func(m mutate.Mutant) bool { return m.Service == t.Service }) {
			continue
		}
		for _, seed := range seeds {
			b, err := r.baselineOf(t.Service, seed, true)
			if err != nil {
				return err
			}
			res.Baselines = append(res.Baselines, b)
		}
	}
	for j, m := range ms {
		if j%n != i {
			continue
		}
		for _, seed := range seeds {
			o, err := r.score(m, seed)
			if err != nil {
				return fmt.Errorf("mutants: mutant %d (%s %s) seed %d: %w", m.ID, m.Service, m.Op, seed, err)
			}
			res.Outcomes = append(res.Outcomes, o)
		}
	}
	if f.out == "" {
		return json.NewEncoder(stdout).Encode(res)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if err := os.WriteFile(f.out, b, 0o644); err != nil {
		return fmt.Errorf("mutants: %w", err)
	}
	return nil
}

// sampleOf picks the mutants a --sample names. The sample takes, for
// every service, its lowest-ID mutant of each of sampleOps operators,
// the operators rotating with the service's position so that together
// the services cover every operator; short takes the first of those per
// service (a subset of the sample: its verdicts are the sample's).
func sampleOf(ms []mutate.Mutant, sample string) ([]mutate.Mutant, error) {
	per := 0
	switch sample {
	case "all":
		return ms, nil
	case "sample":
		per = sampleOps
	case "short":
		per = 1
	default:
		return nil, fmt.Errorf("%w: --sample must be all, sample or short, got %q", errUsage, sample)
	}
	var out []mutate.Mutant
	for si, t := range mutate.DefaultTargets() {
		picked := 0
		for j := range len(mutate.Ops) {
			if picked == per {
				break
			}
			op := mutate.Ops[(si*sampleOps+j)%len(mutate.Ops)]
			k := slices.IndexFunc(ms, func(m mutate.Mutant) bool { return m.Service == t.Service && m.Op == op })
			if k >= 0 {
				out = append(out, ms[k])
				picked++
			}
		}
	}
	slices.SortFunc(out, func(a, b mutate.Mutant) int { return a.ID - b.ID })
	return out, nil
}

// sampleOps is how many operators the sample takes per service.
const sampleOps = 3

// onlyServices keeps the mutants of the comma-separated services list
// (all of them when it is empty); an unknown service is a usage error.
func onlyServices(ms []mutate.Mutant, list string) ([]mutate.Mutant, error) {
	if list == "" {
		return ms, nil
	}
	var out []mutate.Mutant
	for _, s := range strings.Split(list, ",") {
		if !slices.ContainsFunc(mutate.DefaultTargets(), func(t mutate.Target) bool { return t.Service == s }) {
			return nil, fmt.Errorf("%w: unknown service %q in --services", errUsage, s)
		}
		for _, m := range ms {
			if m.Service == s {
				out = append(out, m)
			}
		}
	}
	slices.SortFunc(out, func(a, b mutate.Mutant) int { return a.ID - b.ID })
	return out, nil
}
