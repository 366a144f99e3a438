package kv_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/examples/etcdraft/kv"
	"github.com/seed6eee2ec7/crystalball/node"
)

// joinOptions: four nodes, node 4 a joiner, the corrected store.
func joinOptions() kv.Options {
	o := kv.DefaultOptions()
	o.ApplyCommitted, o.Nodes, o.Membership = true, 4, kv.MembershipOptions{Joiners: 1}
	return o
}

// TestJoinerIsAddedAndPromoted: a leader adds the joiner as a learner
// once the cluster has applied the first writes, promotes it once it has
// caught up, and every node applies the configuration of four voters;
// the joiner then holds the writes made before it joined. Every property
// holds over the run, and no bounded property has an outage (seed 3, 40
// emulated seconds, with the leader reset after 20: the restarted leader
// rebuilds its configuration from its durable state).
func TestJoinerIsAddedAndPromoted(t *testing.T) {
	e, err := emulation.New(emulation.Config{Spec: spec(t, joinOptions()), Nodes: 4, Seed: 3, Duration: 40 * time.Second, Workload: kv.Workload})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.RunUntil(emulation.Epoch.Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	want := kv.Conf{Voters: []uint64{1, 2, 3, 4}}
	var leader node.ID
	for id := node.ID(1); id <= 4; id++ {
		o, ok := kv.Observed(e.View(), id)
		if !ok || o.App.Conf == nil || !slices.Equal(o.App.Conf.Voters, want.Voters) || len(o.App.Conf.Learners) != 0 {
			t.Fatalf("after 20 s %v applied configuration %+v, want %+v", id, o.App.Conf, want)
		}
		if o.State == "StateLeader" {
			leader = id
		}
	}
	if leader == node.None {
		t.Fatal("no leader after 20 s")
	}
	if err := e.Reset(leader, false); err != nil {
		t.Fatal(err)
	}
	if o, _ := kv.Observed(e.View(), leader); o.App.Conf == nil || !slices.Equal(o.App.Conf.Voters, want.Voters) {
		t.Fatalf("the reset leader %v applied %+v, want %+v", leader, o.App.Conf, want)
	}
	res, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Safety {
		if s.Episodes != 0 {
			t.Errorf("%s: %d episodes: %s", s.Name, s.Episodes, s.FirstError)
		}
	}
	for _, h := range res.History {
		if !h.Holds {
			t.Errorf("%s: %s", h.Name, h.Error)
		}
	}
	for _, tr := range res.Timed {
		if tr.Outages != 0 {
			t.Errorf("%s: %d outages, the longest %+v", tr.Name, tr.Outages, tr.Longest)
		}
	}
	four, _ := kv.Observed(e.View(), 4)
	if four.App.KV["k1"] == "" || four.App.KV["k4"] == "" {
		t.Errorf("the joiner's store %v lacks the writes of node 1 or its own", four.App.KV)
	}
}

// TestJoinersBounds: a cluster needs one voter to start.
func TestJoinersBounds(t *testing.T) {
	for _, j := range []int{-1, 4} {
		o := joinOptions()
		o.Membership.Joiners = j
		if _, _, err := kv.Spec(o); !errors.Is(err, kv.ErrOptions) {
			t.Errorf("%d joiners of 4 nodes: %v, want ErrOptions", j, err)
		}
	}
}
