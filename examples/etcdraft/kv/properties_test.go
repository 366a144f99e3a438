package kv_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/examples/etcdraft/kv"
	"github.com/seed6eee2ec7/crystalball/node"
)

// timedResult returns the over-time verdict of the property name.
func timedResult(t *testing.T, r emulation.Result, name string) emulation.TimedResult {
	t.Helper()
	for _, tr := range r.Timed {
		if tr.Name == name {
			return tr
		}
	}
	t.Fatalf("no timed result for %s in %+v", name, r.Timed)
	return emulation.TimedResult{}
}

// historyResult returns the verdict of the history property name.
func historyResult(t *testing.T, r emulation.Result, name string) emulation.HistoryResult {
	t.Helper()
	for _, h := range r.History {
		if h.Name == name {
			return h
		}
	}
	t.Fatalf("no history result for %s in %+v", name, r.History)
	return emulation.HistoryResult{}
}

// leaderRun emulates three corrected stores configured with opts (seed
// 1) for d, the nodes started within spread of each other, with churn
// (12 leaves a minute, 3 s down on average) when churn is set; it returns
// the result, the violations reported during the run and the final view.
func leaderRun(t *testing.T, opts kv.Options, spread, d time.Duration, churn bool) (emulation.Result, []emulation.Violation, node.View) {
	t.Helper()
	var viols []emulation.Violation
	cfg := emulation.Config{Spec: spec(t, opts), Nodes: 3, Seed: 1, Duration: d, Workload: kv.Workload, StartSpread: spread,
		Observers: emulation.Observers{OnViolation: func(v emulation.Violation) {
			if v.Property == "LeaderWithin" {
				viols = append(viols, v)
			}
		}},
	}
	if churn {
		cfg.Churn = emulation.ChurnConfig{Rate: 12, Downtime: 3 * time.Second}
	}
	e, err := emulation.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatalf("seed 1: %v", err)
	}
	return r, viols, e.View()
}

// topTerm is the highest term of a store in v.
func topTerm(v node.View) uint64 {
	var top uint64
	for _, id := range v.Nodes() {
		if o, ok := kv.Observed(v, id); ok {
			top = max(top, o.Term)
		}
	}
	return top
}

// TestLeaderWithinBound: with churn taking the leader down again and
// again, a quorum elects a new one within LeaderWithin's bound every time
// (no outage; the obligation is open only while an election runs); three
// stores started within a millisecond of each other elect one too (raft's
// randomized timeouts, drawn from each node's seeded source, keep their
// candidacies apart).
func TestLeaderWithinBound(t *testing.T) {
	healthy := kv.Options{ApplyCommitted: true}
	const d, round = 30 * time.Second, 2 * time.Second
	r, viols, final := leaderRun(t, healthy, time.Second, d, true)
	tr := timedResult(t, r, "LeaderWithin")
	if tr.Bound != healthy.LeaderBound() || tr.Bound != 6*time.Second {
		t.Errorf("bound %v, want LeaderBound %v (3 rounds of 1 s + 1 s of jitter)", tr.Bound, healthy.LeaderBound())
	}
	// The obligation is open only while an election runs: the first, and
	// one after each leader the churn took down. A term starts at most an
	// election round (1 s + 1 s of jitter) after the cluster lost its
	// leader, and ends an election at once unless the vote is split: at
	// most that round without a leader per term.
	top := topTerm(final)
	if r.Churn.Leaves == 0 || top < 4 || len(viols) != 0 || tr.Outages != 0 || tr.Availability < 1-float64(top)*round.Seconds()/d.Seconds() {
		t.Errorf("churn (%d leaves, term %d at the end): violations %v, %+v; want several elections, each within the bound",
			r.Churn.Leaves, top, viols, tr)
	}
	t.Logf("with churn: %d leaves, term %d at the end, LeaderWithin availability %.3f", r.Churn.Leaves, top, tr.Availability)

	const spread = time.Millisecond
	if r, viols, _ := leaderRun(t, healthy, spread, 10*time.Second, false); len(viols) != 0 || timedResult(t, r, "LeaderWithin").Outages != 0 {
		t.Errorf("jittered, started together: violations %v; want a leader within the bound", viols)
	}
}

// staleReadRun emulates three corrected stores configured with opts
// (seed 3, started within a second): at 6 s a follower is cut off from
// the others, which go on writing their keys; at 10 s it reads them
// (Get), at 11 s it is reconnected, at 16 s it reads them again, and the
// run ends at 20 s. It returns the result, the run's client history and
// the follower.
func staleReadRun(t *testing.T, opts kv.Options) (emulation.Result, node.History, node.ID) {
	t.Helper()
	e, err := emulation.New(emulation.Config{Spec: spec(t, opts), Nodes: 3, Seed: 3, Duration: 20 * time.Second,
		Workload: kv.Workload, StartSpread: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	until := func(at time.Duration) {
		t.Helper()
		if err := e.RunUntil(emulation.Epoch.Add(at)); err != nil {
			t.Fatalf("seed 3: %v", err)
		}
	}
	until(6 * time.Second)
	var follower node.ID
	for id := node.ID(1); id <= 3; id++ {
		if o, ok := kv.Observed(e.View(), id); ok && o.State == "StateFollower" && o.Lead != 0 {
			follower = id
		}
	}
	if follower == node.None {
		t.Fatal("seed 3: no follower of a leader at 6 s")
	}
	readOthers := func() {
		t.Helper()
		for id := node.ID(1); id <= 3; id++ {
			if id != follower {
				if err := e.AppCall(follower, kv.Get{Key: fmt.Sprintf("k%d", id)}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := e.Isolate(follower); err != nil {
		t.Fatal(err)
	}
	until(10 * time.Second)
	readOthers()
	until(11 * time.Second)
	if err := e.Reconnect(follower); err != nil {
		t.Fatal(err)
	}
	until(16 * time.Second)
	readOthers()
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatalf("seed 3: %v", err)
	}
	return r, e.History(), follower
}

// TestLinearizableSeesTheStaleRead: a follower cut off from the leader
// that answers Gets from its own applied map (LocalReads, etcd's
// serializable reads) returns values the others have since overwritten,
// with acknowledged writes: no state violates a safety property, and the
// client history is not linearizable. The store's own reads, through the
// log, wait for the partition to heal and return the latest values: the
// history of the same run is linearizable, every read answered.
func TestLinearizableSeesTheStaleRead(t *testing.T) {
	r, _, follower := staleReadRun(t, kv.Options{ApplyCommitted: true, Client: kv.ClientOptions{Reads: kv.ReadsLocal}})
	for _, s := range r.Safety {
		if s.ViolatedStates != 0 {
			t.Errorf("local reads: %s violated (%s), want no violated state", s.Name, s.FirstError)
		}
	}
	h := historyResult(t, r, "Linearizable")
	if h.Holds || !strings.Contains(h.Error, fmt.Sprintf("%v etcdkv.Get", follower)) {
		t.Errorf("local reads: %+v, want a stale Get at %v", h, follower)
	}
	if at := h.FirstViolation; at < 10*time.Second || at >= 11*time.Second {
		t.Errorf("local reads: first violated at %v, want by a read during the partition (10 s)", at)
	}
	t.Logf("local reads: %s", h.Error)

	r, hist, follower := staleReadRun(t, kv.Options{ApplyCommitted: true})
	h = historyResult(t, r, "Linearizable")
	if !h.Holds || h.Operations < 15 {
		t.Errorf("reads through the log: %+v, want linearizable", h)
	}
	ops, err := hist.Operations()
	if err != nil {
		t.Fatal(err)
	}
	var reads []string
	for _, o := range ops {
		if g, ok := o.Op.(kv.Get); ok && o.Node == follower {
			v, _ := o.Result.(kv.Value)
			reads = append(reads, fmt.Sprintf("%s=%s@%v", g.Key, v.Value, o.ReturnAt.Sub(emulation.Epoch)))
			if !o.Done() || o.ReturnAt.Before(emulation.Epoch.Add(11*time.Second)) {
				t.Errorf("reads through the log: %v %v answered at %v, want after the partition healed (11 s)", o.Node, g, o.ReturnAt.Sub(emulation.Epoch))
			}
		}
	}
	if len(reads) != 4 {
		t.Errorf("reads through the log: the follower's reads %v, want 4", reads)
	}
	t.Logf("reads through the log: %d operations, linearizable; the follower's reads %v", h.Operations, reads)
}
