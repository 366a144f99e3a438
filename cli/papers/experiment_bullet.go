package papers

import (
	"bufio"
	"context"
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
	fileBytes := math.Ceil(f.fileMB * (1 << 20))
	if err := f.checkBounds(fileBytes); err != nil {
		return cfg, err
	}
	up, down, snapCap, err := f.bandwidths()
	if err != nil {
		return cfg, err
	}
	fixes := tool.SplitList(f.fix)
	if err := checkBulletFixes(fixes); err != nil {
		return cfg, err
	}
	return experiments.BulletOverheadConfig{Nodes: f.nodes, FileBytes: int64(fileBytes), BlockSize: f.blockSize, Seed: f.seed,
		MaxDuration: *f.maxDuration, Snapshots: *f.snapshots, MaxStates: f.maxStates, Walks: walksConfig(f.walks), CostPerState: *f.costPerState,
		Uplink: up, Downlink: down, SendQueueBytes: f.sendQueue, SnapshotBandwidth: snapCap, Fixes: fixes}, nil
}

// checkBounds checks the numeric flags, in the order their errors are
// reported: the sizes, the search budgets, the intervals, and the file's
// block count (of fileBytes, the file rounded up to whole bytes).
func (f *bulletOverheadFlags) checkBounds(fileBytes float64) error {
	blocks := math.Ceil(fileBytes / float64(f.blockSize))
	return tool.FirstNonNilError(
		tool.FirstBrokenRule(
			tool.BrokenIf(f.nodes < 2 || f.nodes > 1000, tool.UsageErrorf("--nodes must be in 2..1000 (n1 is the source), got %d", f.nodes)),
			tool.BrokenIf(tool.AnyConditionHolds(!(f.fileMB > 0), math.IsInf(f.fileMB, 0)), tool.UsageErrorf("--file-mb must be a positive number of MiB, got %v", f.fileMB)),
			tool.BrokenIf(f.blockSize <= 0 || f.blockSize > bullet.MaxBlockSize, tool.UsageErrorf("--block-size must be in 1..%d bytes, got %d", bullet.MaxBlockSize, f.blockSize)),
			tool.BrokenIf(f.maxStates <= 0, tool.UsageErrorf("--max-states must be positive, got %d", f.maxStates)),
			tool.BrokenIf(f.walks < 0, tool.UsageErrorf("--walks must not be negative, got %d", f.walks)),
			tool.BrokenIf(f.sendQueue < 0, tool.UsageErrorf("--send-queue must not be negative, got %d", f.sendQueue)),
			tool.BrokenIf(tool.AnyConditionHolds(*f.maxDuration <= 0, *f.costPerState <= 0),
				tool.UsageErrorf("--max-duration and --cost-per-state must be positive, got %v and %v", *f.maxDuration, *f.costPerState)),
		),
		tool.CheckInterval("snapshots", *f.snapshots),
		tool.FirstBrokenRule(
			tool.BrokenIf(*f.snapshots == 0, tool.UsageErrorf("--snapshots must be positive: the run with CrystalBall checkpoints and gathers")),
			tool.BrokenIf(blocks > bullet.MaxBlocks, tool.UsageErrorf("--file-mb %v is %.0f blocks of %d bytes, more than %d", f.fileMB, blocks, f.blockSize, bullet.MaxBlocks)),
		),
	)
}

// bandwidths parses --uplink, --downlink (positive, inet: the paper's
// links) and --snapshot-bandwidth (0: no cap).
func (f *bulletOverheadFlags) bandwidths() (up, down, snapCap int64, err error) {
	if up, err = parseAccessLink("uplink", f.uplink, emulation.INETUplink); err != nil {
		return 0, 0, 0, err
	}
	if down, err = parseAccessLink("downlink", f.downlink, emulation.INETDownlink); err != nil {
		return 0, 0, 0, err
	}
	if snapCap, err = tool.ParseBandwidth(f.snapCap, 0); err != nil {
		return 0, 0, 0, tool.UsageErrorf("--snapshot-bandwidth: %v", err)
	}
	return up, down, snapCap, nil
}

// parseAccessLink parses the access link flag name (value s; inet is
// the paper's capacity): a positive capacity, as 0 is unlimited.
func parseAccessLink(name, s string, inet int64) (int64, error) {
	v, err := tool.ParseBandwidth(s, inet)
	if err != nil || v == 0 {
		return 0, tool.UsageErrorf("--%s: %s (want a positive capacity or inet)", name, bandwidthText(s, err))
	}
	return v, nil
}

// checkBulletFixes checks that every --fix names a Bullet′ correction.
func checkBulletFixes(fixes []string) error {
	opts := bullet.DefaultOptions()
	for _, fx := range fixes {
		if err := opts.EnableFix(fx); err != nil {
			return tool.UsageErrorf("--fix: %v", err)
		}
	}
	return nil
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
	defer plot.Close() // nil without --plot: (*os.File).Close then does nothing
	ctx, cancel := interruptible()
	defer cancel()
	res, err := runBulletProfiled(ctx, cfg, f.cpu)
	if err != nil {
		return err
	}
	if err := printResult(stdout, f.asJSON, res); err != nil {
		return err
	}
	return writeBulletPlot(plot, res, stderr)
}

// runBulletProfiled runs the experiment with a CPU profile written to
// cpu (none for "").
func runBulletProfiled(ctx context.Context, cfg experiments.BulletOverheadConfig, cpu string) (*experiments.BulletOverheadResult, error) {
	stop, err := tool.StartCPUProfile(cpu)
	if err != nil {
		return nil, err
	}
	res, err := experiments.BulletOverhead(ctx, cfg)
	stop()
	return res, err
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
	if err := writeBufferedAndClose(file, res.WritePlot); err != nil {
		return fmt.Errorf("--plot %s: %w", file.Name(), err)
	}
	return nil
}

// writeBufferedAndClose writes file through a buffer with write, flushes
// it and closes the file; the first error of the three is returned.
func writeBufferedAndClose(file *os.File, write func(io.Writer) error) error {
	w := bufio.NewWriter(file)
	err := write(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return err
}
