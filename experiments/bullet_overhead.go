package experiments

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/bullet"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
	"github.com/seed6eee2ec7/crystalball/webview"
)

// BulletOverheadFormat is the format of a BulletOverheadResult.
const BulletOverheadFormat = "crystalball-experiment-bullet-overhead/1"

// Defaults of BulletOverheadConfig: the paper's §5.5 (Figure 17), 49
// Bullet′ nodes downloading a 20 MB file over the INET access links.
const (
	DefaultBulletOverheadNodes       = 49
	DefaultBulletOverheadFileBytes   = bullet.DefaultBlocks * bullet.DefaultBlockSize // 20 MiB
	DefaultBulletOverheadMaxDuration = 30 * time.Minute
	DefaultBulletOverheadSnapshots   = emulation.ModeSnapshotInterval
	DefaultBulletOverheadMaxStates   = emulation.SteerMaxStates
	DefaultBulletOverheadSeed        = 1 // the seed docs/RESULTS.md uses; not a default: every seed, 0 too, is a seed of its own
)

// bulletSource is the node that serves the file (as cli/papers/catalog_bullet.go
// runs Bullet′).
const bulletSource node.ID = 1

// bulletCheckEvery is how often (virtual time) a run checks whether every
// node has completed: a run stops at most this long after the last
// completion.
const bulletCheckEvery = time.Second

// BulletOverheadConfig configures BulletOverhead. Zero fields take the
// defaults above; negative sizes and durations are errors.
type BulletOverheadConfig struct {
	// Nodes is the number of Bullet′ nodes, n1 the source, in 2..1000.
	// Default 49.
	Nodes int
	// FileBytes is the size of the file in bytes, rounded up to whole
	// blocks (at most bullet.MaxBlocks). Default 20 MiB (1280 blocks of
	// 16 KiB).
	FileBytes int64
	// BlockSize is the block size in bytes (at most bullet.MaxBlockSize).
	// Default bullet.DefaultBlockSize (16 KiB).
	BlockSize int
	// Seed seeds both runs: they see the same network, start times and
	// node randomness. Every value, 0 included, is a seed of its own.
	Seed uint64
	// MaxDuration bounds each run in emulated time: a run stops when every
	// node has the file or at MaxDuration, reporting the nodes still
	// downloading. Default 30 minutes.
	MaxDuration time.Duration
	// Snapshots is every node's checkpoint and gather interval with
	// CrystalBall. Default emulation.ModeSnapshotInterval (10 s, the
	// paper's).
	Snapshots time.Duration
	// MaxStates is the unique-state budget of each search of a round (every
	// node predicts, so it stays small). Default emulation.SteerMaxStates.
	MaxStates int
	// Walks is the number of random walks each round takes against the
	// liveness properties (steering.Config.Walks). Zero means the
	// steering default; negative, none: the rounds search for safety
	// violations only (the tests' small runs use it, as the walks are most
	// of a round's cost when AllBlocks is far from holding).
	Walks int
	// CostPerState is the virtual time a round is charged per explored
	// state (emulation.SteeringConfig.CostPerState). Default
	// steering.DefaultCostPerState.
	CostPerState time.Duration
	// Uplink and Downlink are every node's access links in bits per
	// second. Default emulation.INETUplink and INETDownlink (1 and 5 Mb/s).
	Uplink, Downlink int64
	// SendQueueBytes bounds a connection's send queue. Default
	// emulation.DefaultSendQueueBytes.
	SendQueueBytes int
	// SnapshotBandwidth caps every node's answers to gathers at that many
	// bits per second (snapshot.Config.BandwidthBits, the paper's §4 cap,
	// with snapshot.DefaultBurst of allowance): an answer over it is a
	// negative one and leaves the node out of that snapshot. Zero: no cap
	// (the default).
	SnapshotBandwidth int64
	// Fixes are the Bullet′ corrections to apply (bullet.Options.EnableFix
	// names: "keep-shadow" or "all"). Nil: the paper's code, with its bug.
	Fixes []string
	// Progress, when non-nil, gets a line as each run starts.
	Progress io.Writer
}

// DefaultBulletOverheadConfig returns the configuration the zero value
// means.
func DefaultBulletOverheadConfig() BulletOverheadConfig {
	return BulletOverheadConfig{}.withDefaults()
}

func (c BulletOverheadConfig) withDefaults() BulletOverheadConfig {
	orDefault(&c.Nodes, DefaultBulletOverheadNodes)
	orDefault(&c.FileBytes, DefaultBulletOverheadFileBytes)
	orDefault(&c.BlockSize, bullet.DefaultBlockSize)
	orDefault(&c.MaxDuration, DefaultBulletOverheadMaxDuration)
	orDefault(&c.Snapshots, DefaultBulletOverheadSnapshots)
	orDefault(&c.MaxStates, DefaultBulletOverheadMaxStates)
	orDefault(&c.CostPerState, steering.DefaultCostPerState)
	orDefault(&c.Uplink, emulation.INETUplink)
	orDefault(&c.Downlink, emulation.INETDownlink)
	orDefault(&c.SendQueueBytes, emulation.DefaultSendQueueBytes)
	return c
}

// blocks is the file's size in blocks.
func (c BulletOverheadConfig) blocks() int64 {
	return (c.FileBytes + int64(c.BlockSize) - 1) / int64(c.BlockSize)
}

// validate checks a configuration with its defaults filled in.
func (c BulletOverheadConfig) validate() error {
	switch {
	case c.Nodes < 2 || c.Nodes > 1000:
		return fmt.Errorf("experiments: bullet-overhead: nodes must be in 2..1000 (n1 is the source), got %d", c.Nodes)
	case c.FileBytes < 0 || c.BlockSize < 0 || c.BlockSize > bullet.MaxBlockSize:
		return fmt.Errorf("experiments: bullet-overhead: file size must be positive and block size in 1..%d, got %d and %d", bullet.MaxBlockSize, c.FileBytes, c.BlockSize)
	case c.blocks() > bullet.MaxBlocks:
		return fmt.Errorf("experiments: bullet-overhead: a %d-byte file is %d blocks of %d bytes, more than %d", c.FileBytes, c.blocks(), c.BlockSize, bullet.MaxBlocks)
	case c.MaxDuration < 0 || c.Snapshots < 0 || c.CostPerState < 0 || c.MaxStates < 0:
		return fmt.Errorf("experiments: bullet-overhead: max duration, snapshot interval, cost per state and max states must not be negative")
	case c.Uplink < 0 || c.Downlink < 0 || c.SendQueueBytes < 0 || c.SnapshotBandwidth < 0:
		return fmt.Errorf("experiments: bullet-overhead: link capacities, send queue and snapshot bandwidth must not be negative")
	}
	_, err := c.options()
	return err
}

// options returns the Bullet′ options of the runs.
func (c BulletOverheadConfig) options() (bullet.Options, error) {
	opts := bullet.DefaultOptions()
	opts.Blocks, opts.BlockSize = int(c.blocks()), c.BlockSize
	for _, f := range c.Fixes {
		if err := opts.EnableFix(f); err != nil {
			return opts, fmt.Errorf("experiments: bullet-overhead: %w", err)
		}
	}
	return opts, nil
}

// BulletOverheadResult is the outcome of BulletOverhead.
type BulletOverheadResult struct {
	// Format is BulletOverheadFormat; Experiment is "bullet-overhead".
	Format     string `json:"format"`
	Experiment string `json:"experiment"`
	Nodes      int    `json:"nodes"`
	FileBytes  int64  `json:"file_bytes"`
	Blocks     int    `json:"blocks"`
	BlockSize  int    `json:"block_size"`
	Seed       uint64 `json:"seed"`
	// Options are the Bullet′ options (bullet.Options.String).
	Options string `json:"options"`
	// UplinkBits and DownlinkBits are the access links in bits/s;
	// SendQueueBytes the send queue bound.
	UplinkBits     int64 `json:"uplink_bps"`
	DownlinkBits   int64 `json:"downlink_bps"`
	SendQueueBytes int   `json:"send_queue_bytes"`
	// CrystalBall describes the with-CrystalBall configuration.
	CrystalBall  string `json:"crystalball"`
	Snapshots    string `json:"snapshot_interval"`
	MaxStates    int    `json:"max_states"`
	CostPerState string `json:"cost_per_state"`
	MaxDuration  string `json:"max_duration"`
	// SnapshotBandwidth is the cap on answers in bits/s (0: none).
	SnapshotBandwidth int64 `json:"snapshot_bandwidth_bps"`
	// Without and With are the two runs.
	Without BulletRun `json:"without"`
	With    BulletRun `json:"with"`
	// Slowdown compares the runs' download times.
	Slowdown BulletSlowdown `json:"slowdown"`

	// Headline is the figure to read first, beside the paper's; Charts
	// the charts that carry the experiment's figures ('crystalball serve'
	// leads the experiment's page with them).
	Headline Headline        `json:"headline"`
	Charts   []webview.Chart `json:"charts"`
}

// BulletSlowdown is how much longer downloads take with CrystalBall, in
// percent of the time without ((with - without) / without · 100; negative:
// faster), over the completed downloads of each run.
type BulletSlowdown struct {
	MedianPercent float64 `json:"median_percent"`
	MeanPercent   float64 `json:"mean_percent"`
	MaxPercent    float64 `json:"max_percent"`
}

// BulletRun is one run of the experiment.
type BulletRun struct {
	// Config is "without" or "with" (CrystalBall).
	Config string `json:"config"`
	// Downloaders is the number of nodes that download (all but the
	// source); Complete how many finished; Incomplete lists the others.
	Downloaders int       `json:"downloaders"`
	Complete    int       `json:"complete"`
	Incomplete  []node.ID `json:"incomplete"`
	// Download is the distribution of the completed download times, from
	// a node's Download call to its last block.
	Download Distribution `json:"download_s"`
	// VirtualSeconds is the emulated time at which the run stopped.
	VirtualSeconds float64 `json:"virtual_s"`
	Events         int64   `json:"events"`
	WallSeconds    float64 `json:"wall_s"`
	// ServiceBytes and LayerBytes are the bytes put on uplinks by the
	// service and by the snapshot layer (emulation.LinkStats); Refused the
	// sends refused at a full send queue.
	ServiceBytes int64 `json:"service_bytes"`
	LayerBytes   int64 `json:"layer_bytes"`
	Refused      int64 `json:"refused_sends"`
	// Checkpoints is the snapshot layer's account; nil without
	// CrystalBall.
	Checkpoints *BulletCheckpoints `json:"checkpoints,omitempty"`
	// Steering is the predictors' account (steering.Stats summed over
	// the nodes: in mode Debug no event is changed, FilterHits and Vetoes
	// zero, which makes the comparison one of cost alone); nil without
	// CrystalBall.
	Steering *steering.Stats `json:"steering,omitempty"`
}

// Distribution summarises a sample of durations in seconds. Percentiles
// are nearest-rank (Percentile); Sorted is the whole sample, ascending,
// for the CDF plot. A zero N leaves every figure zero.
type Distribution struct {
	N      int       `json:"n"`
	Min    float64   `json:"min"`
	P10    float64   `json:"p10"`
	P25    float64   `json:"p25"`
	Median float64   `json:"median"`
	P75    float64   `json:"p75"`
	P90    float64   `json:"p90"`
	Max    float64   `json:"max"`
	Mean   float64   `json:"mean"`
	Sorted []float64 `json:"sorted"`
}

// NewDistribution summarises xs (seconds); xs is not modified.
func NewDistribution(xs []float64) Distribution {
	d := Distribution{N: len(xs), Sorted: slices.Clone(xs)}
	if d.Sorted == nil {
		d.Sorted = []float64{}
	}
	if len(xs) == 0 {
		return d
	}
	slices.Sort(d.Sorted)
	pct := func(p float64) float64 { v, _ := Percentile(d.Sorted, p); return v }
	d.Min, d.Max = d.Sorted[0], d.Sorted[len(d.Sorted)-1]
	d.P10, d.P25, d.Median, d.P75, d.P90 = pct(10), pct(25), pct(50), pct(75), pct(90)
	d.Mean, _ = meanStd(xs)
	return d
}

// BulletCheckpoints is the checkpoint and snapshot traffic of a run with
// CrystalBall.
type BulletCheckpoints struct {
	// Taken counts the checkpoints taken; RawMean and RawMax their sizes
	// in bytes (the service state's canonical encoding).
	Taken   int64   `json:"taken"`
	RawMean float64 `json:"raw_mean_bytes"`
	RawMax  int     `json:"raw_max_bytes"`
	// Sent counts the checkpoints sent in answers to gathers (with a
	// payload: an answer identical to the peer's base sends none);
	// SentMean and SentMax the payload bytes as sent (compressed, against
	// the base the peer has when there is one).
	Sent     int64   `json:"sent"`
	SentMean float64 `json:"sent_mean_bytes"`
	SentMax  int     `json:"sent_max_bytes"`
	// Unchanged counts answers that sent no payload.
	Unchanged int64 `json:"unchanged"`
	// BitsPerNodeMean and BitsPerNodeMax are the snapshot layer's traffic
	// (requests, answers, markers) per node, in bits per second of the
	// run: the mean over the nodes and the busiest node; UplinkShare is
	// the mean as a fraction of the uplink.
	BitsPerNodeMean float64 `json:"bits_per_node_mean"`
	BitsPerNodeMax  float64 `json:"bits_per_node_max"`
	UplinkShare     float64 `json:"uplink_share"`
	// AnswerBytes is the wire size of every answer to a gather
	// (snapshot.Stats.ResponseBytes, summed); StateBytes the checkpoint
	// payload in them and ChannelBytes roughly the rest, the recorded
	// in-flight messages of the cut (beyond the paper, whose snapshots
	// hold checkpoints only: a recorded Bullet′ Block carries its payload).
	AnswerBytes int64 `json:"answer_bytes"`
	// CapRefused counts the answers the bandwidth cap turned negative
	// (snapshot.Stats.NegativeBandwidth).
	CapRefused   int64 `json:"cap_refused"`
	StateBytes   int64 `json:"state_bytes"`
	ChannelBytes int64 `json:"channel_bytes"`
	// CheckpointBitsPerNode is the checkpoint payload alone, per node, in
	// bits per second of the run (mean over the nodes): the paper's
	// "bandwidth used for checkpoints".
	CheckpointBitsPerNode float64 `json:"checkpoint_bits_per_node"`
	// Gathers and GatherFailures count completed and given-up gathers;
	// FailureReasons the given-up ones by reason (snapshot.Failure.Reason
	// up to its first colon).
	Gathers        int64            `json:"gathers"`
	GatherFailures int64            `json:"gather_failures"`
	FailureReasons map[string]int64 `json:"failure_reasons"`
}

// BulletOverhead runs the paper's §5.5 (Figure 17): Bullet′ nodes download
// a file from n1 over access links of finite capacity, once without
// CrystalBall and once with it, with the same seed, and compares the
// download times. With CrystalBall every node checkpoints, gathers its
// neighbourhood's snapshot and runs consequence prediction from it every
// Snapshots (mode Debug: predictions are reported, no filter or check
// changes an event, so the difference is CrystalBall's cost alone);
// checkpoints and gathers travel on the same links and queues as blocks,
// and exploration is charged in virtual time.
func BulletOverhead(ctx context.Context, cfg BulletOverheadConfig) (*BulletOverheadResult, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	opts, _ := cfg.options()
	out := &BulletOverheadResult{Format: BulletOverheadFormat, Experiment: "bullet-overhead", Nodes: cfg.Nodes,
		FileBytes: cfg.FileBytes, Blocks: opts.Blocks, BlockSize: opts.BlockSize, Seed: cfg.Seed, Options: opts.String(),
		UplinkBits: cfg.Uplink, DownlinkBits: cfg.Downlink, SendQueueBytes: cfg.SendQueueBytes,
		CrystalBall:  "mode debug, every node checkpoints, gathers and predicts (no filters, no immediate check)",
		Snapshots:    cfg.Snapshots.String(),
		MaxStates:    cfg.MaxStates,
		CostPerState: cfg.CostPerState.String(),
		MaxDuration:  cfg.MaxDuration.String(), SnapshotBandwidth: cfg.SnapshotBandwidth}
	for _, with := range []bool{false, true} {
		name := map[bool]string{false: "without", true: "with"}[with]
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "running %s CrystalBall...\n", name)
		}
		run, err := bulletRun(ctx, cfg, opts, with)
		if err != nil {
			return nil, fmt.Errorf("experiments: bullet-overhead %s CrystalBall: %w", name, err)
		}
		run.Config = name
		if with {
			out.With = run
		} else {
			out.Without = run
		}
	}
	out.Slowdown = BulletSlowdown{
		MedianPercent: slowdown(out.Without.Download.Median, out.With.Download.Median),
		MeanPercent:   slowdown(out.Without.Download.Mean, out.With.Download.Mean),
		MaxPercent:    slowdown(out.Without.Download.Max, out.With.Download.Max),
	}
	out.Headline, out.Charts = bulletHeadline(out), bulletCharts(out)
	return out, nil
}

// slowdown is (with - without) / without in percent (0 when without is 0).
func slowdown(without, with float64) float64 {
	if without == 0 {
		return 0
	}
	return (with - without) / without * 100
}

// bulletObserver collects a run's download times and checkpoint sizes.
type bulletObserver struct {
	times     map[node.ID]float64
	ckpt      BulletCheckpoints
	rawSum    int64
	sentSum   int64
	snapshots bool
}

func (o *bulletObserver) step(s emulation.Step) {
	st, ok := s.Service.(*bullet.State)
	if !ok {
		return
	}
	if _, done := o.times[s.Node]; done {
		return
	}
	if d, ok := st.DownloadTime(s.Node); ok {
		o.times[s.Node] = d.Seconds()
	}
}

func (o *bulletObserver) checkpoint(c emulation.CheckpointEvent) {
	o.ckpt.Taken++
	o.rawSum += int64(c.Size)
	o.ckpt.RawMax = max(o.ckpt.RawMax, c.Size)
}

func (o *bulletObserver) network(ev emulation.NetworkEvent) {
	r, ok := ev.Msg.(snapshot.Response)
	if ev.Kind != emulation.NetSend || !ok {
		return
	}
	if r.Encoding == snapshot.EncodingSame {
		o.ckpt.Unchanged++
		return
	}
	o.ckpt.Sent++
	o.sentSum += int64(len(r.State))
	o.ckpt.SentMax = max(o.ckpt.SentMax, len(r.State))
}

// failure counts a gather given up by its reason, without the details
// after a colon (the dead members' IDs), so reasons add up.
func (o *bulletObserver) failure(_ node.ID, f snapshot.Failure) {
	reason, _, _ := strings.Cut(f.Reason, ":")
	o.ckpt.FailureReasons[reason]++
}

// bulletConfig is the emulation of one run; o observes it.
func bulletConfig(cfg BulletOverheadConfig, opts bullet.Options, with bool, o *bulletObserver) emulation.Config {
	ecfg := emulation.Config{
		Spec:      bullet.NewSpec(opts),
		Nodes:     cfg.Nodes,
		Seed:      cfg.Seed,
		Duration:  cfg.MaxDuration,
		Workload:  func(node.ID, bool) []node.Message { return []node.Message{bullet.Download{Source: bulletSource}} },
		Network:   emulation.NetworkConfig{Uplink: cfg.Uplink, Downlink: cfg.Downlink, SendQueueBytes: cfg.SendQueueBytes},
		Observers: emulation.Observers{OnStep: o.step},
	}
	if !with {
		return ecfg
	}
	// Mode Debug's configuration, but with every node gathering and
	// predicting (ModeConfig picks DebugPredictors of them).
	snaps, steer := emulation.ModeConfig(steering.Debug, cfg.Nodes, false)
	snaps.Gatherers, steer.Predictors = nil, nil
	snaps.Manager.Interval, snaps.Manager.GatherInterval = cfg.Snapshots, cfg.Snapshots
	snaps.Manager.BandwidthBits = float64(cfg.SnapshotBandwidth)
	// Snapshot messages wait behind blocks at the uplinks: the timeouts
	// and last round that let gathers complete there.
	snaps.Manager = emulation.LinkedSnapshots(snaps.Manager, ecfg.Network)
	snaps.OnCheckpoint, snaps.OnFailure = o.checkpoint, o.failure
	steer.Controller.MaxStates = cfg.MaxStates
	if cfg.Walks != 0 {
		steer.Controller.Walks = cfg.Walks
	}
	steer.CostPerState = cfg.CostPerState
	ecfg.Snapshots, ecfg.Steering = snaps, steer
	ecfg.OnNetwork = o.network
	o.snapshots = true
	o.ckpt.FailureReasons = map[string]int64{}
	return ecfg
}

// bulletRun runs one configuration until every node has the file or
// MaxDuration has passed.
func bulletRun(ctx context.Context, cfg BulletOverheadConfig, opts bullet.Options, with bool) (BulletRun, error) {
	o := &bulletObserver{times: map[node.ID]float64{}}
	e, err := emulation.New(bulletConfig(cfg, opts, with, o))
	if err != nil {
		return BulletRun{}, err
	}
	start := time.Now()
	for t := bulletCheckEvery; len(o.times) < cfg.Nodes-1; t += bulletCheckEvery {
		t = min(t, cfg.MaxDuration)
		if err := e.RunUntilContext(ctx, emulation.Epoch.Add(t)); err != nil {
			return BulletRun{}, err
		}
		if t == cfg.MaxDuration {
			break
		}
	}
	res := e.Result()
	run := BulletRun{Downloaders: cfg.Nodes - 1, Complete: len(o.times), Incomplete: []node.ID{},
		VirtualSeconds: res.VirtualDuration.Seconds(), Events: res.Events, WallSeconds: time.Since(start).Seconds()}
	times := make([]float64, 0, len(o.times))
	for id := node.ID(2); int(id) <= cfg.Nodes; id++ {
		if d, ok := o.times[id]; ok {
			times = append(times, d)
		} else {
			run.Incomplete = append(run.Incomplete, id)
		}
	}
	run.Download = NewDistribution(times)
	if l := res.Links; l != nil {
		run.ServiceBytes, run.LayerBytes, run.Refused = l.ServiceBytes, l.LayerBytes, l.Refused
	}
	if with {
		run.Checkpoints = o.checkpoints(e, res, cfg)
		run.Steering = bulletSteering(res.Steering)
	}
	return run, nil
}

// checkpoints completes the checkpoint account from the run's result and
// every node's share of the links.
func (o *bulletObserver) checkpoints(e *emulation.Emulator, res emulation.Result, cfg BulletOverheadConfig) *BulletCheckpoints {
	c := o.ckpt
	if c.Taken > 0 {
		c.RawMean = float64(o.rawSum) / float64(c.Taken)
	}
	if c.Sent > 0 {
		c.SentMean = float64(o.sentSum) / float64(c.Sent)
	}
	if s := res.Snapshots; s != nil {
		c.Gathers, c.GatherFailures = s.Gathers, s.Failures
		c.AnswerBytes, c.StateBytes = s.Totals.ResponseBytes, s.Totals.StateBytes
		c.CapRefused = s.Totals.NegativeBandwidth
		c.ChannelBytes = max(c.AnswerBytes-c.StateBytes, 0)
	}
	secs := res.VirtualDuration.Seconds()
	if secs <= 0 {
		return &c
	}
	c.CheckpointBitsPerNode = float64(c.StateBytes) * 8 / secs / float64(cfg.Nodes)
	var sum float64
	for id := node.ID(1); int(id) <= cfg.Nodes; id++ {
		bps := float64(e.NodeLinks(id).LayerBytes) * 8 / secs
		sum += bps
		c.BitsPerNodeMax = max(c.BitsPerNodeMax, bps)
	}
	c.BitsPerNodeMean = sum / float64(cfg.Nodes)
	if cfg.Uplink > 0 {
		c.UplinkShare = c.BitsPerNodeMean / float64(cfg.Uplink)
	}
	return &c
}

// bulletSteering reads the predictors' account off a run's result.
func bulletSteering(s *emulation.SteeringResult) *steering.Stats {
	if s == nil {
		return &steering.Stats{}
	}
	return &s.Stats
}

// WritePlot writes the CDF of both runs' download times as SVG (Figure
// 17's form). It fails when a run completed no download.
func (r *BulletOverheadResult) WritePlot(w io.Writer) error {
	title := fmt.Sprintf("Bullet′: %d nodes download %s (seed %d)", r.Nodes, byteSize(r.FileBytes), r.Seed)
	return webview.WriteCDFSVG(w, title, "download time (s)", []webview.Series{
		{Name: "without CrystalBall", Values: r.Without.Download.Sorted},
		{Name: "with CrystalBall", Values: r.With.Download.Sorted},
	})
}

// byteSize renders a size in the largest binary unit that divides it
// evenly enough ("20 MiB", "192 KiB", "1000 B").
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// String renders the result as 'crystalball experiment bullet-overhead'
// prints it: the configuration, a row per run, the slowdown and the
// checkpoint traffic.
func (r *BulletOverheadResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "bullet-overhead: %d nodes download %s (%d blocks of %d B) from n1, seed %d, links %.3g/%.3g Mb/s up/down, send queue %d B\n",
		r.Nodes, byteSize(r.FileBytes), r.Blocks, r.BlockSize, r.Seed, float64(r.UplinkBits)/1e6, float64(r.DownlinkBits)/1e6, r.SendQueueBytes)
	fmt.Fprintf(&b, "bullet: %s\n", r.Options)
	capText := "no cap on answers"
	if r.SnapshotBandwidth > 0 {
		capText = fmt.Sprintf("answers capped at %.3g kb/s", float64(r.SnapshotBandwidth)/1e3)
	}
	fmt.Fprintf(&b, "with CrystalBall: %s; snapshots every %s, %s, %d states per search, %s per state\n\n",
		r.CrystalBall, r.Snapshots, capText, r.MaxStates, r.CostPerState)
	fmt.Fprintf(&b, "%-8s %9s %8s %8s %8s %8s %8s %8s %8s %9s %8s %7s\n",
		"run", "complete", "min s", "p10 s", "median s", "mean s", "p90 s", "max s", "stop s", "events", "refused", "wall s")
	for _, run := range []BulletRun{r.Without, r.With} {
		d := run.Download
		fmt.Fprintf(&b, "%-8s %4d/%-4d %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %9d %8d %7.1f\n",
			run.Config, run.Complete, run.Downloaders, d.Min, d.P10, d.Median, d.Mean, d.P90, d.Max, run.VirtualSeconds, run.Events, run.Refused, run.WallSeconds)
	}
	fmt.Fprintf(&b, "\nslowdown with CrystalBall: median %+.2f%%, mean %+.2f%%, max %+.2f%% (the paper: < 5%% on a quiet CPU, < 10%% overall)\n",
		r.Slowdown.MedianPercent, r.Slowdown.MeanPercent, r.Slowdown.MaxPercent)
	for _, run := range []BulletRun{r.Without, r.With} {
		if len(run.Incomplete) > 0 {
			fmt.Fprintf(&b, "INCOMPLETE %s CrystalBall: %d nodes never finished: %v\n", run.Config, len(run.Incomplete), run.Incomplete)
		}
	}
	if c := r.With.Checkpoints; c != nil {
		fmt.Fprintf(&b, "checkpoints: %d taken, raw mean %.0f B max %d B; %d sent, as sent mean %.0f B max %d B (%d answers unchanged, no payload) (the paper: about 3 kB compressed)\n",
			c.Taken, c.RawMean, c.RawMax, c.Sent, c.SentMean, c.SentMax, c.Unchanged)
		fmt.Fprintf(&b, "checkpoint payload per node: %.1f kb/s (the paper: about 30 kb/s, 3%% of 1 Mb/s)\n", c.CheckpointBitsPerNode/1e3)
		fmt.Fprintf(&b, "snapshot traffic per node (requests, answers with checkpoints and recorded in-flight messages, markers): mean %.1f kb/s, max %.1f kb/s, %.2f%% of the uplink; answers %s, of which checkpoints %s and recorded channels about %s\n",
			c.BitsPerNodeMean/1e3, c.BitsPerNodeMax/1e3, 100*c.UplinkShare, byteSize(c.AnswerBytes), byteSize(c.StateBytes), byteSize(c.ChannelBytes))
		fmt.Fprintf(&b, "gathers: %d completed, %d given up%s; %d answers refused by the bandwidth cap\n", c.Gathers, c.GatherFailures, reasonsText(c.FailureReasons), c.CapRefused)
	}
	if s := r.With.Steering; s != nil {
		fmt.Fprintf(&b, "prediction: %d rounds, %d states explored, %d violations predicted, %.1f s of exploration, %d events changed\n",
			s.Rounds, s.StatesExplored, s.Predictions(), s.ExplorationSeconds, s.FilterHits+s.Vetoes)
	}
	return b.String()
}

// reasonsText renders gather failures by reason, most frequent first.
func reasonsText(m map[string]int64) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, m[k])
	}
	return " (" + strings.Join(parts, "; ") + ")"
}
