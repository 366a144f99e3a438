package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/paxos"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// config is the crash test's flags.
type config struct {
	bin, dir  string
	services  []string
	nodes     int
	cycles    int
	seed      uint64
	settle    time.Duration
	maxDelay  time.Duration
	ephemeral bool
	asJSON    bool
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func parse(args []string, stderr io.Writer) (config, error) {
	var c config
	var services string
	fs := flag.NewFlagSet("crash", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.bin, "bin", "", "the crystalball binary (default: go build ./cmd/crystalball into --dir)")
	fs.StringVar(&c.dir, "dir", "", "directory for the nodes' data directories and logs (default: a new temporary directory, removed after a pass)")
	fs.StringVar(&services, "services", "paxos,randtree", "services to crash, comma-separated: paxos, randtree")
	fs.IntVar(&c.nodes, "nodes", 3, "nodes per cluster")
	fs.IntVar(&c.cycles, "cycles", 20, "kill cycles per service")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the kills' choices (which nodes, when)")
	fs.DurationVar(&c.settle, "settle", time.Minute, "how long a cluster may take to converge again after a cycle")
	fs.DurationVar(&c.maxDelay, "max-delay", time.Second, "longest wait before a kill that does not wait for convergence (kills land at any moment of the protocol)")
	fs.BoolVar(&c.ephemeral, "ephemeral", false, "run the nodes without --data-dir (--ephemeral): what main did before the store; Paxos is then expected to fail")
	fs.BoolVar(&c.asJSON, "json", false, "print one JSON object instead of the lines")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("crash: unexpected argument %q", fs.Arg(0))
	}
	c.services = strings.Split(services, ",")
	for _, s := range c.services {
		if s != paxos.Name && s != randtree.Name {
			return c, fmt.Errorf("crash: unknown service %q (paxos, randtree)", s)
		}
	}
	switch {
	case c.nodes < 2 || c.nodes > 9:
		return c, errors.New("crash: --nodes must be in 2..9")
	case c.cycles < 1:
		return c, errors.New("crash: --cycles must be positive")
	case c.settle <= 0 || c.maxDelay < 0:
		return c, errors.New("crash: --settle must be positive and --max-delay not negative")
	}
	return c, nil
}

// outcome is one service's crash run (-json prints them).
type outcome struct {
	Service   string   `json:"service"`
	Nodes     int      `json:"nodes"`
	Seed      uint64   `json:"seed"`
	Cycles    int      `json:"cycles_survived"`
	KillAll   int      `json:"kill_all_cycles"`
	KillSome  int      `json:"kill_some_cycles"`
	Kills     int      `json:"kills"`
	Settled   int      `json:"settles"`
	Observed  int      `json:"states_observed"`
	Values    []string `json:"values_learned,omitempty"`
	Summary   string   `json:"summary"`
	Failure   string   `json:"failure,omitempty"`
	Seconds   float64  `json:"seconds"`
	Ephemeral bool     `json:"ephemeral,omitempty"`
}

func run(args []string, stdout, stderr io.Writer) error {
	cfg, err := parse(args, stderr)
	if err != nil {
		return err
	}
	keep := cfg.dir != ""
	if !keep {
		if cfg.dir, err = os.MkdirTemp("", "crystalball-crash-"); err != nil {
			return err
		}
	}
	if cfg.bin == "" {
		cfg.bin = filepath.Join(cfg.dir, "crystalball")
		build := exec.Command("go", "build", "-o", cfg.bin, "github.com/seed6eee2ec7/crystalball/cmd/crystalball")
		build.Stderr = stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("crash: go build: %w", err)
		}
	}
	var outs []outcome
	failed := false
	for _, svc := range cfg.services {
		out := crash(cfg, svc, func(line string) {
			if !cfg.asJSON {
				fmt.Fprintln(stdout, line)
			}
		})
		outs = append(outs, out)
		failed = failed || out.Failure != ""
	}
	if cfg.asJSON {
		if err := json.NewEncoder(stdout).Encode(outs); err != nil {
			return err
		}
	}
	if failed {
		return fmt.Errorf("crash: FAILED (logs in %s)", cfg.dir)
	}
	if !keep {
		os.RemoveAll(cfg.dir)
	}
	return nil
}

// crash runs one service's cluster through cfg.cycles kill cycles.
func crash(cfg config, svc string, say func(string)) (out outcome) {
	start := time.Now()
	out = outcome{Service: svc, Nodes: cfg.nodes, Seed: cfg.seed, Ephemeral: cfg.ephemeral}
	defer func() { out.Seconds = time.Since(start).Seconds() }()
	t := newTarget(svc, cfg.nodes)
	args := []string{"--service", svc, "--fix", "all", "--label", "crash-" + svc, "--snapshots", "0"}
	if svc == paxos.Name {
		args = append(args, "--nodes", fmt.Sprint(cfg.nodes))
	}
	if cfg.ephemeral {
		args = append(args, "--ephemeral")
	}
	dir := filepath.Join(cfg.dir, svc)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		out.Failure = err.Error()
		return out
	}
	c, err := newCluster(cfg.bin, dir, cfg.nodes, args)
	if err != nil {
		out.Failure = err.Error()
		return out
	}
	if cfg.ephemeral {
		for _, p := range c.procs {
			p.dataDir = ""
		}
	}
	defer c.stopAll()
	r := rand.New(rand.NewPCG(cfg.seed, 0xc7a5))
	d := &driver{c: c, t: t, r: r, cfg: cfg, out: &out}
	if err := d.restart(c.procs); err != nil {
		out.Failure = err.Error()
		say(fmt.Sprintf("%s: FAILED to start: %v", svc, err))
		return out
	}
	for cycle := 1; cycle <= cfg.cycles; cycle++ {
		line, err := d.cycle(cycle)
		if err != nil {
			out.Failure = fmt.Sprintf("cycle %d: %v", cycle, err)
			say(fmt.Sprintf("%s: FAILED at cycle %d: %v", svc, cycle, err))
			return out
		}
		out.Cycles = cycle
		say(fmt.Sprintf("%s: cycle %d: %s", svc, cycle, line))
	}
	if err := d.converge(); err != nil {
		out.Failure = fmt.Sprintf("after the last cycle: %v", err)
		say(fmt.Sprintf("%s: FAILED after the last cycle: %v", svc, err))
		return out
	}
	out.Summary, out.Values = d.summary, t.values()
	say(survivedLine(svc, out, t.paxos != nil))
	return out
}

// driver runs the cycles of one cluster.
type driver struct {
	c       *cluster
	t       *target
	r       *rand.Rand
	cfg     config
	out     *outcome
	summary string
}

// cycle waits for convergence (half the cycles; else a random moment of
// the protocol), kills all the nodes or a random nonempty part of them
// with SIGKILL, and restarts them on their data directories.
func (d *driver) cycle(n int) (string, error) {
	settled := d.r.IntN(2) == 0
	if settled {
		if err := d.converge(); err != nil {
			return "", err
		}
		d.out.Settled++
	} else if err := d.watch(d.delay()); err != nil {
		return "", err
	}
	when := "mid-protocol"
	if settled {
		when = "settled: " + d.summary
	}
	victims := slices.Clone(d.c.procs)
	kind := "kill-all"
	if d.r.IntN(2) == 0 {
		d.r.Shuffle(len(victims), func(i, j int) { victims[i], victims[j] = victims[j], victims[i] })
		victims = victims[:1+d.r.IntN(len(victims)-1)]
		slices.SortFunc(victims, func(a, b *proc) int { return a.id - b.id })
		kind = "kill-some"
		d.out.KillSome++
	} else {
		d.out.KillAll++
	}
	var names []string
	for _, p := range victims {
		d.c.kill(p)
		d.out.Kills++
		names = append(names, fmt.Sprintf("n%d", p.id))
	}
	if err := d.restart(victims); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s %v (%s)", kind, names, when), nil
}

// delay draws how long to wait before a kill that does not wait for
// convergence: half the time within the first 50ms (a node that just
// started is in the middle of its first ballot), else up to
// cfg.maxDelay.
func (d *driver) delay() time.Duration {
	limit := d.cfg.maxDelay
	if d.r.IntN(2) == 0 {
		limit = min(limit, 50*time.Millisecond)
	}
	return time.Duration(d.r.Int64N(int64(limit) + 1))
}

// restart starts ps again: through a node still running, or, when none
// is, the first of ps starts the cluster and the others join it.
func (d *driver) restart(ps []*proc) error {
	join := ""
	for _, p := range d.c.procs {
		if p.running() {
			join = p.listen
			break
		}
	}
	for _, p := range ps {
		if err := d.c.start(p, join); err != nil {
			return err
		}
		if join == "" {
			// The others join through it: wait until it serves.
			if err := d.until(func() bool { _, err := d.c.status(p); return err == nil }); err != nil {
				return fmt.Errorf("n%d never served: %w", p.id, err)
			}
			join = p.listen
		}
	}
	return nil
}

// converge observes the nodes until the service has converged.
func (d *driver) converge() error {
	return d.until(func() bool { return d.t.converged })
}

// watch observes the nodes for dur.
func (d *driver) watch(dur time.Duration) error {
	end := time.Now().Add(dur)
	return d.until(func() bool { return !time.Now().Before(end) })
}

// until observes every node every 50ms, judging each state, until done
// holds, a node breaks a promise, a node exits by itself, or cfg.settle
// passes.
func (d *driver) until(done func() bool) error {
	deadline := time.Now().Add(d.cfg.settle)
	for {
		states := map[node.ID]json.RawMessage{}
		for _, p := range d.c.procs {
			if st, err := d.c.status(p); err == nil && st.Running && len(st.State) > 0 {
				states[node.ID(p.id)] = st.State
			}
		}
		d.out.Observed += len(states)
		summary, bad, err := d.t.observe(states)
		if err != nil {
			return err
		}
		d.summary = summary
		if len(bad) > 0 {
			return fmt.Errorf("%s", strings.Join(bad, "; "))
		}
		if ex := d.c.exited(); len(ex) > 0 {
			return fmt.Errorf("%s", strings.Join(ex, "\n"))
		}
		if done() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not converged within %v: %s", d.cfg.settle, summary)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
