package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// smallBulletOverhead is a configuration that runs in seconds: 6 nodes
// download a 192 KiB file (48 blocks of 4 KiB) over the INET links, every
// node checkpointing and gathering every 2 s with CrystalBall.
func smallBulletOverhead(seed uint64) BulletOverheadConfig {
	return BulletOverheadConfig{Nodes: 6, FileBytes: 192 << 10, BlockSize: 4 << 10, Seed: seed,
		MaxDuration: 5 * time.Minute, Snapshots: 2 * time.Second, MaxStates: 200, Walks: -1}
}

// Both runs complete; the run with CrystalBall carries checkpoints on
// the links, gathers and predicts, the run without carries none of it;
// the distributions and the slowdown are computed from the download
// times.
func TestBulletOverheadSmall(t *testing.T) {
	const seed = 1
	res, err := BulletOverhead(context.Background(), smallBulletOverhead(seed))
	if err != nil {
		t.Fatalf("seed=%d: %v", seed, err)
	}
	t.Logf("seed=%d:\n%s", seed, res)
	if res.Format != BulletOverheadFormat || res.Blocks != 48 || res.BlockSize != 4096 || res.Nodes != 6 {
		t.Errorf("header %+v", res)
	}
	for _, run := range []BulletRun{res.Without, res.With} {
		if run.Complete != 5 || run.Downloaders != 5 || len(run.Incomplete) != 0 || run.Download.N != 5 || len(run.Download.Sorted) != 5 {
			t.Errorf("seed=%d %s: %d/%d complete (incomplete %v), distribution %+v", seed, run.Config, run.Complete, run.Downloaders, run.Incomplete, run.Download)
		}
		d := run.Download
		if !(d.Min > 0 && d.Min <= d.Median && d.Median <= d.Max && d.Min <= d.Mean && d.Mean <= d.Max && d.Sorted[0] == d.Min && d.Sorted[4] == d.Max) {
			t.Errorf("seed=%d %s: distribution out of order: %+v", seed, run.Config, d)
		}
		if run.ServiceBytes < 5*192<<10 {
			t.Errorf("seed=%d %s: %d service bytes, less than the file to 5 nodes", seed, run.Config, run.ServiceBytes)
		}
	}
	if w := res.Without; w.LayerBytes != 0 || w.Checkpoints != nil || w.Steering != nil {
		t.Errorf("seed=%d: the run without CrystalBall has layer bytes %d, checkpoints %+v, steering %+v", seed, w.LayerBytes, w.Checkpoints, w.Steering)
	}
	w := res.With
	if w.LayerBytes == 0 || w.Checkpoints == nil || w.Steering == nil {
		t.Fatalf("seed=%d: the run with CrystalBall has layer bytes %d, checkpoints %+v, steering %+v", seed, w.LayerBytes, w.Checkpoints, w.Steering)
	}
	c := w.Checkpoints
	if c.Taken == 0 || c.Sent == 0 || c.RawMean <= 0 || c.SentMax <= 0 || c.Gathers == 0 || c.BitsPerNodeMean <= 0 || c.BitsPerNodeMax < c.BitsPerNodeMean {
		t.Errorf("seed=%d: checkpoints %+v", seed, c)
	}
	if w.Steering.Rounds == 0 || w.Steering.StatesExplored == 0 || w.Steering.Predictions() == 0 || w.Steering.FilterHits+w.Steering.Vetoes != 0 {
		t.Errorf("seed=%d: steering %+v: want rounds and predictions, no event changed", seed, w.Steering)
	}
	want := slowdown(res.Without.Download.Median, res.With.Download.Median)
	if res.Slowdown.MedianPercent != want {
		t.Errorf("seed=%d: median slowdown %v, want %v", seed, res.Slowdown.MedianPercent, want)
	}
}

// The same seed gives the same figures (wall times aside), and the JSON
// has the fields the CLI's --json promises.
func TestBulletOverheadDeterministic(t *testing.T) {
	const seed = 3
	cfg := smallBulletOverhead(seed)
	cfg.Nodes, cfg.MaxStates = 4, 50
	a, err := BulletOverhead(context.Background(), cfg)
	if err != nil {
		t.Fatalf("seed=%d: %v", seed, err)
	}
	b, err := BulletOverhead(context.Background(), cfg)
	if err != nil {
		t.Fatalf("seed=%d: %v", seed, err)
	}
	for _, r := range []*BulletOverheadResult{a, b} {
		r.Without.WallSeconds, r.With.WallSeconds, r.With.Steering.ExplorationSeconds = 0, 0, 0
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Fatalf("seed=%d: two runs differ:\n%s\n%s", seed, ja, jb)
	}
	var m map[string]any
	if err := json.Unmarshal(ja, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"format", "without", "with", "slowdown"} {
		if m[k] == nil {
			t.Errorf("JSON lacks %q: %s", k, ja)
		}
	}
	var svg bytes.Buffer
	if err := a.WritePlot(&svg); err != nil || !strings.Contains(svg.String(), "with CrystalBall") {
		t.Errorf("plot: %v\n%s", err, svg.String())
	}
}

// A run that cannot finish stops at MaxDuration and lists the nodes still
// downloading.
func TestBulletOverheadIncomplete(t *testing.T) {
	const seed = 1
	cfg := smallBulletOverhead(seed)
	cfg.Nodes, cfg.MaxDuration = 4, 2*time.Second // nodes start within 10 s
	res, err := BulletOverhead(context.Background(), cfg)
	if err != nil {
		t.Fatalf("seed=%d: %v", seed, err)
	}
	if run := res.Without; run.Complete != 0 || len(run.Incomplete) != 3 || run.Incomplete[0] != node.ID(2) || run.VirtualSeconds != 2 {
		t.Errorf("seed=%d: %+v", seed, run)
	}
	if !strings.Contains(res.String(), "INCOMPLETE without CrystalBall: 3 nodes never finished: [n2 n3 n4]") {
		t.Errorf("text:\n%s", res)
	}
	var svg bytes.Buffer
	if err := res.WritePlot(&svg); err == nil {
		t.Errorf("a plot of no download: no error")
	}
}

func TestBulletOverheadBadConfig(t *testing.T) {
	for _, c := range []struct {
		cfg  BulletOverheadConfig
		want string
	}{
		{BulletOverheadConfig{Nodes: 1}, "nodes must be in 2..1000"},
		{BulletOverheadConfig{FileBytes: -1}, "file size must be positive"},
		{BulletOverheadConfig{BlockSize: 1 << 20}, "block size in 1.."},
		{BulletOverheadConfig{FileBytes: 1<<30 + 1}, "more than 65536"},
		{BulletOverheadConfig{MaxDuration: -time.Second}, "must not be negative"},
		{BulletOverheadConfig{Uplink: -1}, "must not be negative"},
		{BulletOverheadConfig{SnapshotBandwidth: -1}, "must not be negative"},
		{BulletOverheadConfig{Fixes: []string{"nope"}}, `bullet: unknown fix "nope"`},
	} {
		_, err := BulletOverhead(context.Background(), c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "experiments: bullet-overhead: ") {
			t.Errorf("%+v: error %v, want one with %q", c.cfg, err, c.want)
		}
	}
}

// A cap on answers bounds the snapshot traffic: answers over it are
// refused (negative), and the layer's bytes per node stay near the cap
// (1 kb/s: 1.4 kb/s) where without it they are above (2.4 kb/s, seed 1).
func TestBulletOverheadSnapshotBandwidthCap(t *testing.T) {
	const seed = 1
	cfg := smallBulletOverhead(seed)
	cfg.SnapshotBandwidth = 1_000
	res, err := BulletOverhead(context.Background(), cfg)
	if err != nil {
		t.Fatalf("seed=%d: %v", seed, err)
	}
	c := res.With.Checkpoints
	t.Logf("seed=%d: cap %d b/s: %d answers refused, snapshot traffic mean %.0f b/s max %.0f b/s", seed, cfg.SnapshotBandwidth, c.CapRefused, c.BitsPerNodeMean, c.BitsPerNodeMax)
	if res.SnapshotBandwidth != 1_000 || c.CapRefused == 0 || c.BitsPerNodeMean > 2*1_000 {
		t.Errorf("seed=%d: cap %d: %d answers refused, snapshot traffic per node %.0f b/s", seed, res.SnapshotBandwidth, c.CapRefused, c.BitsPerNodeMean)
	}
	if res.With.Complete != 5 {
		t.Errorf("seed=%d: %d of 5 complete", seed, res.With.Complete)
	}
}
