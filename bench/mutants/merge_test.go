package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/bench/mutants/mutate"
	"github.com/seed6eee2ec7/crystalball/examples/zoo/scoreboard"
)

// shardOf is shard i of n with one outcome, for mutant id.
func shardOf(i, n, id int) shardResult {
	return shardResult{Format: shardFormat, Digest: "d", Sample: "all", Seeds: []uint64{1}, Shard: i, Shards: n,
		Outcomes: []outcome{{Mutant: mutate.Mutant{ID: id}, Seed: 1}}}
}

func TestMergeShards(t *testing.T) {
	all, err := mergeShards("d", []shardResult{shardOf(1, 2, 3), shardOf(0, 2, 5)})
	if err != nil || len(all.Outcomes) != 2 || all.Outcomes[0].Mutant.ID != 3 {
		t.Fatalf("merge of 1/2 and 0/2: %+v, %v", all.Outcomes, err)
	}
	other := shardOf(1, 2, 3)
	other.Seeds = []uint64{2}
	for name, shards := range map[string][]shardResult{
		"missing":  {shardOf(0, 2, 1)},
		"twice":    {shardOf(0, 2, 1), shardOf(0, 2, 1)},
		"digest":   {shardOf(0, 1, 1)},
		"settings": {shardOf(0, 2, 1), other},
	} {
		digest := "d"
		if name == "digest" {
			digest = "e"
		}
		if _, err := mergeShards(digest, shards); !errors.Is(err, errShard) {
			t.Errorf("%s: error %v, want errShard", name, err)
		}
	}
}

// TestMergeRunsByService: runs of disjoint service lists, each complete,
// merge into one board of their union; overlapping lists, a run of every
// service beside another, an incomplete run or other seeds do not.
func TestMergeRunsByService(t *testing.T) {
	of := func(services string, shard, shards, id int) shardResult {
		r := shardOf(shard, shards, id)
		r.Services = services
		return r
	}
	all, err := mergeShards("d", []shardResult{of("chord", 0, 1, 40), of("paxos,bullet", 1, 2, 160), of("paxos,bullet", 0, 2, 70)})
	if err != nil || all.Services != "bullet,chord,paxos" || len(all.Outcomes) != 3 || all.Outcomes[0].Mutant.ID != 40 {
		t.Fatalf("merge by service: services %q, %d outcomes, %v", all.Services, len(all.Outcomes), err)
	}
	seeds := of("chord", 0, 1, 40)
	seeds.Seeds = []uint64{9}
	for name, shards := range map[string][]shardResult{
		"overlap":    {of("chord", 0, 1, 40), of("chord,paxos", 0, 1, 70)},
		"every":      {of("", 0, 1, 40), of("paxos", 0, 1, 70)},
		"incomplete": {of("chord", 0, 1, 40), of("paxos", 0, 2, 70)},
		"seeds":      {of("paxos", 0, 1, 70), seeds},
	} {
		if _, err := mergeShards("d", shards); !errors.Is(err, errShard) {
			t.Errorf("%s: error %v, want errShard", name, err)
		}
	}
}

func FuzzDecodeShard(f *testing.F) {
	good, _ := json.Marshal(shardOf(0, 1, 1))
	f.Add(good)
	f.Add([]byte(`{"format":"crystalball-mutants-shard/1","shards":0}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeShard(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, errShard) {
				t.Fatalf("error %v does not wrap errShard", err)
			}
			return
		}
		if r.Shard < 0 || r.Shard >= r.Shards || len(r.Seeds) == 0 {
			t.Fatalf("accepted shard %d/%d with %d seeds", r.Shard, r.Shards, len(r.Seeds))
		}
	})
}

// TestJudgeBite: a kill bites at its earliest killing property's first
// violation or outage; before the first round it bites at the start and is
// caught only offline.
func TestJudgeBite(t *testing.T) {
	s := time.Second
	o := outcome{KilledBy: []string{"safety:A", "liveness:L"}, InTime: true,
		Off:   scoreboard.RunResult{FirstViolations: map[string]time.Duration{"A": 30 * s}, FirstOutages: map[string]time.Duration{"L": 20 * s}},
		Debug: scoreboard.RunResult{FirstRound: 5 * s}}
	o.judgeBite(90 * s)
	if o.BiteAt != 20*s || o.AtStart || !o.CaughtBeforeBite {
		t.Fatalf("later kill predicted in time: bite %v at start %v caught %v", o.BiteAt, o.AtStart, o.CaughtBeforeBite)
	}
	o.Debug.FirstRound = 25 * s
	o.judgeBite(90 * s)
	if !o.AtStart || o.CaughtBeforeBite {
		t.Fatalf("a kill before the first round counted caught by a prediction: %+v", o)
	}
	o.FoundOffline = true
	o.judgeBite(90 * s)
	if !o.CaughtBeforeBite {
		t.Fatal("a kill found offline was not caught before it bit")
	}
	none := outcome{KilledBy: []string{"liveness:L"}}
	none.judgeBite(90 * s)
	if none.BiteAt != 90*s || !none.AtStart {
		t.Fatalf("a liveness kill without an outage and no round: bite %v at start %v", none.BiteAt, none.AtStart)
	}
}
