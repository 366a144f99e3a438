package emulation_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// snapshotConfig is gossipConfig with 12 nodes, churn from 10 s, for 30
// virtual seconds, with snapshot managers on every node and gatherers at
// nodes 3, 6, 9 and 12 (seed 77: 31 gathers and a churn leave).
func snapshotConfig(seed uint64, snaps *[]*snapshot.Snapshot) emulation.Config {
	cfg := gossipConfig(seed, 12, 4, nil)
	cfg.Duration = 30 * time.Second
	cfg.Churn.After = 10 * time.Second
	cfg.Snapshots = &emulation.SnapshotConfig{
		Manager:   snapshot.Config{Interval: 2 * time.Second, GatherConfig: snapshot.GatherConfig{GatherInterval: 3 * time.Second}},
		Gatherers: func(id node.ID) bool { return id%3 == 0 },
		OnSnapshot: func(_ node.ID, s *snapshot.Snapshot) {
			if snaps != nil {
				*snaps = append(*snaps, s)
			}
		},
	}
	return cfg
}

// With snapshot managers on every node, a run is still a pure function of
// its seed: byte-identical traces and results.
func TestSnapshotsSameSeedSameTrace(t *testing.T) {
	const seed = 77
	logSeedOnFailure(t, seed)
	var sa []*snapshot.Snapshot
	a, ra := runTrace(t, snapshotConfig(seed, &sa))
	b, rb := runTrace(t, snapshotConfig(seed, nil))
	if a != b {
		t.Fatalf("two runs with seed %d gave different traces (%d vs %d bytes)", seed, len(a), len(b))
	}
	ra.WallTime, rb.WallTime = 0, 0
	ja, _ := json.Marshal(ra)
	jb, _ := json.Marshal(rb)
	if !bytes.Equal(ja, jb) {
		t.Fatalf("results differ:\n%s\n%s", ja, jb)
	}
	if ra.Snapshots == nil || ra.Snapshots.Gathers < 20 || len(sa) != int(ra.Snapshots.Gathers) {
		t.Fatalf("snapshots: %s (%d seen)", ja, len(sa))
	}
	if !strings.Contains(a, "snapshot gathered cn=") || !strings.Contains(a, "snapshot snapshot.Request from") {
		t.Fatal("trace shows no snapshot activity")
	}
	// Only nodes 3, 6, 9 and 12 gather.
	for _, s := range sa {
		if s.Gatherer%3 != 0 {
			t.Fatalf("node %v gathered", s.Gatherer)
		}
	}
	if r := ra.Messages; r.Sent != r.Delivered+r.Dropped+r.Protocol+r.InFlight {
		t.Fatalf("message accounting: %+v", r)
	}
}

// Without Config.Snapshots nothing changes: the trace has no snapshot
// lines and the result no snapshot section.
func TestNoSnapshotsNoTraceChange(t *testing.T) {
	a, r := runTrace(t, gossipConfig(5, 6, 0, nil))
	if strings.Contains(a, "snapshot") || r.Snapshots != nil || r.Messages.Protocol != 0 {
		t.Fatal("snapshot activity without Config.Snapshots")
	}
}

// Gather on demand; errors without managers or for a down node.
func TestGatherOnDemand(t *testing.T) {
	var got []*snapshot.Snapshot
	cfg := snapshotConfig(3, &got)
	cfg.Snapshots.Gatherers = func(node.ID) bool { return false }
	e := mustNew(t, cfg)
	if err := e.RunUntil(emulation.Epoch.Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := e.Gather(1); err != nil {
		t.Fatal(err)
	}
	if err := e.RunUntil(emulation.Epoch.Add(40 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Gatherer != 1 || e.Snapshots(1) == nil || e.Snapshots(1).Status(e.Now()).Stats.Gathers != 1 {
		t.Fatalf("got %d snapshots", len(got))
	}
	plain := mustNew(t, gossipConfig(3, 4, 0, nil))
	if err := plain.RunUntil(emulation.Epoch.Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := plain.Gather(1); err == nil {
		t.Error("Gather without snapshot managers succeeded")
	}
}
