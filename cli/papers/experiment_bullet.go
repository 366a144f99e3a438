package papers

import (
	"bufio"
	"flag"
	"fmt"
	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
	"io"
	"math"
	"os"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/experiments"
	"github.com/seed6eee2ec7/crystalball/services/bullet"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// DefaultBulletOverheadPlot is where 'experiment bullet-overhead' writes
// its CDF plot unless --plot says otherwise.
const DefaultBulletOverheadPlot = "bullet-overhead.svg"

// bulletOverheadFlags are the flags of 'experiment bullet-overhead'.
type bulletOverheadFlags struct {
	nodes, blockSize, maxStates, walks, sendQueue int
	fileMB                                        float64
	seed                                          uint64
	maxDuration, snapshots, costPerState          *time.Duration
	uplink, downlink, snapCap, fix, plot          string
	cpu                                           string
	asJSON                                        bool
	quiet                                         *bool
}

func (f *bulletOverheadFlags) register(fs *flag.FlagSet) {
	d := experiments.DefaultBulletOverheadConfig()
	fs.IntVar(&f.nodes, "nodes", d.Nodes, "Bullet′ nodes (n1 is the source), 2..1000")
	fs.Float64Var(&f.fileMB, "file-mb", float64(d.FileBytes)/(1<<20), "size of the file in MiB (rounded up to whole blocks)")
	fs.IntVar(&f.blockSize, "block-size", d.BlockSize, fmt.Sprintf("block size in bytes, 1..%d", bullet.MaxBlockSize))
	fs.Uint64Var(&f.seed, "seed", experiments.DefaultBulletOverheadSeed, "seed of both runs (the same network, start times and node randomness)")
	f.maxDuration = tool.DurationFlag(fs, "max-duration", d.MaxDuration, "emulated time after which a run stops with nodes still downloading")
	f.snapshots = tool.DurationFlag(fs, "snapshots", d.Snapshots, "checkpoint and gather interval of every node with CrystalBall")
	fs.IntVar(&f.maxStates, "max-states", d.MaxStates, "unique states per search of a prediction round")
	fs.IntVar(&f.walks, "walks", steering.DefaultRoundWalks, "random walks a round takes against the liveness properties (0: none)")
	f.costPerState = tool.DurationFlag(fs, "cost-per-state", steering.DefaultCostPerState, "virtual time a round is charged per explored state")
	fs.StringVar(&f.uplink, "uplink", "inet", "every node's uplink: bits/s with an optional k, M or G prefix (1Mbps, 800kbps), or inet (the paper's 1 Mb/s)")
	fs.StringVar(&f.downlink, "downlink", "inet", "every node's downlink, as --uplink (inet: the paper's 5 Mb/s)")
	fs.IntVar(&f.sendQueue, "send-queue", d.SendQueueBytes, "bytes a connection's send queue holds above the uplink before a TrySend is refused")
	fs.StringVar(&f.snapCap, "snapshot-bandwidth", "0", "cap on every node's answers to gathers, bits/s as --uplink (an answer over it is negative: the node is left out of that snapshot); 0: no cap")
	fs.StringVar(&f.fix, "fix", "", "Bullet′ corrections to apply: keep-shadow or all (default: the paper's code, with its bug)")
	fs.StringVar(&f.plot, "plot", DefaultBulletOverheadPlot, "write the CDF of both runs' download times to this SVG file ('' for none)")
	fs.StringVar(&f.cpu, "cpuprofile", "", "write a CPU profile of the experiment to this file (go tool pprof)")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object instead of the tables")
	f.quiet = tool.QuietFlag(fs)
}

// config checks the flags and builds the experiment's configuration; bad
// values are usage errors.
func (f *bulletOverheadFlags) config() (experiments.BulletOverheadConfig, error) {
	var cfg experiments.BulletOverheadConfig
	switch {
	case f.nodes < 2 || f.nodes > 1000:
		return cfg, tool.UsageErrorf("--nodes must be in 2..1000 (n1 is the source), got %d", f.nodes)
	case !(f.fileMB > 0) || math.IsInf(f.fileMB, 0):
		return cfg, tool.UsageErrorf("--file-mb must be a positive number of MiB, got %v", f.fileMB)
	case f.blockSize <= 0 || f.blockSize > bullet.MaxBlockSize:
		return cfg, tool.UsageErrorf("--block-size must be in 1..%d bytes, got %d", bullet.MaxBlockSize, f.blockSize)
	case f.maxStates <= 0:
		return cfg, tool.UsageErrorf("--max-states must be positive, got %d", f.maxStates)
	case f.walks < 0:
		return cfg, tool.UsageErrorf("--walks must not be negative, got %d", f.walks)
	case f.sendQueue < 0:
		return cfg, tool.UsageErrorf("--send-queue must not be negative, got %d", f.sendQueue)
	case *f.maxDuration <= 0 || *f.costPerState <= 0:
		return cfg, tool.UsageErrorf("--max-duration and --cost-per-state must be positive, got %v and %v", *f.maxDuration, *f.costPerState)
	}
	if err := tool.CheckInterval("snapshots", *f.snapshots); err != nil {
		return cfg, err
	}
	if *f.snapshots == 0 {
		return cfg, tool.UsageErrorf("--snapshots must be positive: the run with CrystalBall checkpoints and gathers")
	}
	fileBytes := math.Ceil(f.fileMB * (1 << 20))
	if blocks := math.Ceil(fileBytes / float64(f.blockSize)); blocks > bullet.MaxBlocks {
		return cfg, tool.UsageErrorf("--file-mb %v is %.0f blocks of %d bytes, more than %d", f.fileMB, blocks, f.blockSize, bullet.MaxBlocks)
	}
	up, err := tool.ParseBandwidth(f.uplink, emulation.INETUplink)
	if err != nil || up == 0 {
		return cfg, tool.UsageErrorf("--uplink: %s (want a positive capacity or inet)", bandwidthText(f.uplink, err))
	}
	down, err := tool.ParseBandwidth(f.downlink, emulation.INETDownlink)
	if err != nil || down == 0 {
		return cfg, tool.UsageErrorf("--downlink: %s (want a positive capacity or inet)", bandwidthText(f.downlink, err))
	}
	snapCap, err := tool.ParseBandwidth(f.snapCap, 0)
	if err != nil {
		return cfg, tool.UsageErrorf("--snapshot-bandwidth: %v", err)
	}
	fixes := tool.SplitList(f.fix)
	opts := bullet.DefaultOptions()
	for _, fx := range fixes {
		if err := opts.EnableFix(fx); err != nil {
			return cfg, tool.UsageErrorf("--fix: %v", err)
		}
	}
	return experiments.BulletOverheadConfig{Nodes: f.nodes, FileBytes: int64(fileBytes), BlockSize: f.blockSize, Seed: f.seed,
		MaxDuration: *f.maxDuration, Snapshots: *f.snapshots, MaxStates: f.maxStates, Walks: walksConfig(f.walks), CostPerState: *f.costPerState,
		Uplink: up, Downlink: down, SendQueueBytes: f.sendQueue, SnapshotBandwidth: snapCap, Fixes: fixes}, nil
}

// walksConfig is the experiment's Walks for --walks n: 0 (none) is
// negative there, where zero stands for the default.
func walksConfig(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// bandwidthText is what a bad --uplink or --downlink was: the parse error,
// or that 0 (unlimited) is no access link.
func bandwidthText(s string, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%q is unlimited: the experiment needs access links", s)
}

func runBulletOverhead(args []string, stdout, stderr io.Writer) error {
	fs := tool.NewFlagSet("experiment bullet-overhead", "experiment bullet-overhead [flags]",
		"The paper's §5.5 (Figure 17): Bullet′ nodes download a file over the INET access links without CrystalBall and with it (every node checkpoints, gathers and predicts), and the download times, the slowdown, the checkpoint sizes and the snapshot traffic per node are compared; the CDF plot goes to --plot.", stderr)
	var f bulletOverheadFlags
	f.register(fs)
	if err := tool.ParseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := f.config()
	if err != nil {
		return err
	}
	progress, endProgress := runProgress(stderr, f.asJSON, *f.quiet, "experiment bullet-overhead")
	defer endProgress()
	cfg.Progress = progress
	plot, err := createPlot(f.plot)
	if err != nil {
		return err
	}
	if plot != nil {
		defer plot.Close()
	}
	stop, err := tool.StartCPUProfile(f.cpu)
	if err != nil {
		return err
	}
	ctx, cancel := interruptible()
	defer cancel()
	res, err := experiments.BulletOverhead(ctx, cfg)
	stop()
	if err != nil {
		return err
	}
	if err := printResult(stdout, f.asJSON, res); err != nil {
		return err
	}
	return writeBulletPlot(plot, res, stderr)
}

// createPlot creates the --plot file before the runs, so a bad path fails
// at once; nil for none (”).
func createPlot(name string) (*os.File, error) {
	if name == "" {
		return nil, nil
	}
	file, err := os.Create(name)
	if err != nil {
		return nil, tool.UsageErrorf("--plot: %v", err)
	}
	return file, nil
}

// writeBulletPlot writes res's CDF plot to file (nil: none) and closes
// it. A run that completed no download has no curve: the plot is then
// skipped with a note on stderr, the results stand.
func writeBulletPlot(file *os.File, res *experiments.BulletOverheadResult, stderr io.Writer) error {
	if file == nil {
		return nil
	}
	if res.Without.Complete == 0 || res.With.Complete == 0 {
		fmt.Fprintf(stderr, "no CDF plot in %s: a run completed no download\n", file.Name())
		return file.Close()
	}
	w := bufio.NewWriter(file)
	err := res.WritePlot(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--plot %s: %w", file.Name(), err)
	}
	return nil
}
