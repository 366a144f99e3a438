package papers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/experiments"
)

// tinyBulletOverhead is a configuration of a second: 4 nodes, a 64 KiB
// file of 4 KiB blocks, snapshots every 2 s, small searches, no liveness
// walks.
var tinyBulletOverhead = []string{"experiment", "bullet-overhead", "--nodes", "4", "--file-mb", "0.0625", "--block-size", "4096",
	"--snapshots", "2s", "--max-states", "50", "--walks", "0", "--seed", "2"}

// --json prints both distributions, the slowdown and the checkpoint
// traffic; --plot writes the CDF of both runs.
func TestExperimentBulletOverheadJSON(t *testing.T) {
	plot := filepath.Join(t.TempDir(), "cdf.svg")
	code, stdout, stderr := runCLI(append(tinyBulletOverhead, "--json", "--plot", plot, "--fix", "keep-shadow", "--snapshot-bandwidth", "800kbps")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out experiments.BulletOverheadResult
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if out.Format != experiments.BulletOverheadFormat || out.Nodes != 4 || out.Blocks != 16 || out.Seed != 2 || out.UplinkBits != 1_000_000 ||
		!strings.Contains(out.Options, "fixes=[keep-shadow]") || out.SnapshotBandwidth != 800_000 {
		t.Errorf("header %+v", out)
	}
	for _, run := range []experiments.BulletRun{out.Without, out.With} {
		if run.Complete != 3 || len(run.Download.Sorted) != 3 || run.Download.Median <= 0 {
			t.Errorf("%s: %+v", run.Config, run)
		}
	}
	if c := out.With.Checkpoints; c == nil || c.BitsPerNodeMean <= 0 || c.Sent == 0 {
		t.Errorf("checkpoints %+v", c)
	}
	if stderr != "" {
		t.Errorf("stderr with --json: %q", stderr)
	}
	svg, err := os.ReadFile(plot)
	if err != nil || !strings.HasPrefix(string(svg), "<svg") || !strings.Contains(string(svg), "without CrystalBall") {
		t.Errorf("plot: %v\n%s", err, svg)
	}
}

// The table goes to stdout, progress to stderr; an empty --plot writes
// no plot.
func TestExperimentBulletOverheadText(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	code, stdout, stderr := runCLI(append(tinyBulletOverhead, "--plot", "")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"bullet-overhead: 4 nodes download 64 KiB", "slowdown with CrystalBall: median", "snapshot traffic per node"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	if stderr != "running without CrystalBall...\nrunning with CrystalBall...\n" {
		t.Errorf("stderr %q", stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("--plot '' wrote %v", entries)
	}
}

func TestExperimentBulletOverheadBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--nodes", "1"}, "--nodes must be in 2..1000"},
		{[]string{"--file-mb", "0"}, "--file-mb must be a positive number"},
		{[]string{"--file-mb", "NaN"}, "--file-mb must be a positive number"},
		{[]string{"--file-mb", "5000"}, "more than 65536"},
		{[]string{"--block-size", "0"}, "--block-size must be in 1..524288"},
		{[]string{"--max-states", "0"}, "--max-states must be positive"},
		{[]string{"--walks", "-1"}, "--walks must not be negative"},
		{[]string{"--max-duration", "0s"}, "--max-duration and --cost-per-state must be positive"},
		{[]string{"--snapshots", "1ns"}, "--snapshots must be 0 (off) or at least"},
		{[]string{"--snapshots", "0s"}, "--snapshots must be positive"},
		{[]string{"--uplink", "fast"}, "--uplink:"},
		{[]string{"--downlink", "0"}, "--downlink: \"0\" is unlimited"},
		{[]string{"--send-queue", "-1"}, "--send-queue must not be negative"},
		{[]string{"--snapshot-bandwidth", "3MB/s"}, "--snapshot-bandwidth: invalid capacity"},
		{[]string{"--fix", "nope"}, `--fix: bullet: unknown fix "nope"`},
		{[]string{"--plot", "/nonexistent/dir/x.svg"}, "--plot:"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		expectUsageError(t, append([]string{"experiment", "bullet-overhead"}, c.args...), c.want)
	}
}
