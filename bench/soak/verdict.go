package main

import (
	"fmt"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// limits are the bounds a healthy node stays within.
type limits struct {
	RSS        int64 // bytes
	Goroutines int
	FDs        int
	// FailStreak is how many samples in a row a node's gathers may fail
	// (gathers_failed moved, gathers did not) before the run fails.
	FailStreak int
	// MaxCN is the largest believable checkpoint number: at one increment
	// a second, 2^40 is 35,000 years.
	MaxCN uint64
	// Peers bounds the peers a node knows (the gossip flood's fake
	// members must not get in); ReportFiles the report files it keeps.
	Peers, ReportFiles int
}

// peaks are the largest figures seen over the run, over all nodes.
type peaks struct {
	RSS        int64  `json:"rss_bytes"`
	Goroutines int    `json:"goroutines"`
	FDs        int    `json:"open_files"`
	CN         uint64 `json:"cn"`
	CNRejected int64  `json:"cn_rejected"`
	// Streak is the longest run of failed gathers of one node, in samples.
	Streak int `json:"failed_gather_streak"`
	// Peers and ReportFiles are the most peers and report files a node
	// had.
	Peers       int `json:"peers"`
	ReportFiles int `json:"report_files"`
}

// judge returns the peaks of rounds and the reasons the run fails (none:
// healthy), the tree at the end aside.
func judge(rounds [][]sample, lim limits) (peaks, []string) {
	var pk peaks
	var why []string
	streak := map[int]int{}
	for r, round := range rounds {
		for i, s := range round {
			pk.RSS, pk.Goroutines, pk.FDs = max(pk.RSS, s.RSS), max(pk.Goroutines, s.Goroutines), max(pk.FDs, s.FDs)
			pk.CN, pk.CNRejected = max(pk.CN, s.CN), max(pk.CNRejected, s.CNRejected)
			pk.Peers, pk.ReportFiles = max(pk.Peers, s.Peers), max(pk.ReportFiles, s.ReportFiles)
			if r > 0 && s.OK && rounds[r-1][i].OK && s.GathersFailed > rounds[r-1][i].GathersFailed && s.Gathers == rounds[r-1][i].Gathers {
				streak[i]++
			} else if s.OK {
				streak[i] = 0
			}
			pk.Streak = max(pk.Streak, streak[i])
		}
	}
	if pk.RSS > lim.RSS {
		why = append(why, fmt.Sprintf("resident memory reached %d MiB (bound %d MiB)", pk.RSS>>20, lim.RSS>>20))
	}
	if pk.Goroutines > lim.Goroutines {
		why = append(why, fmt.Sprintf("goroutines reached %d (bound %d)", pk.Goroutines, lim.Goroutines))
	}
	if pk.FDs > lim.FDs {
		why = append(why, fmt.Sprintf("open files reached %d (bound %d)", pk.FDs, lim.FDs))
	}
	if pk.CN > lim.MaxCN {
		why = append(why, fmt.Sprintf("a checkpoint number reached %d: poisoned (bound %d)", pk.CN, lim.MaxCN))
	}
	if lim.Peers > 0 && pk.Peers > lim.Peers {
		why = append(why, fmt.Sprintf("a node knew %d peers (bound %d): fake members got in", pk.Peers, lim.Peers))
	}
	if lim.ReportFiles > 0 && pk.ReportFiles > lim.ReportFiles {
		why = append(why, fmt.Sprintf("a node kept %d report files (bound %d)", pk.ReportFiles, lim.ReportFiles))
	}
	if pk.Streak >= lim.FailStreak {
		why = append(why, fmt.Sprintf("a node's gathers failed %d samples in a row (bound %d)", pk.Streak, lim.FailStreak))
	}
	return pk, why
}

// treeView is the nodes' RandTree states as one node.View.
type treeView map[node.ID]*randtree.State

func (v treeView) Nodes() []node.ID {
	ids := make([]node.ID, 0, len(v))
	for id := range v {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (v treeView) Service(id node.ID) node.Service {
	if s, ok := v[id]; ok {
		return s
	}
	return nil
}

func (v treeView) TimerScheduled(node.ID, string) bool { return false }

// whole checks RandTree's liveness properties (one root, every node
// joined, parents and children agreeing, no loops) on the last sample of
// every node; a node that did not answer fails it.
func whole(last []sample) []string {
	v := treeView{}
	var why []string
	for i, s := range last {
		if s.State == nil {
			why = append(why, fmt.Sprintf("n%d did not answer /status at the end", i+1))
			continue
		}
		v[node.ID(i+1)] = s.State
	}
	for _, p := range randtree.LivenessProperties() {
		if err := p.Check(v); err != nil {
			why = append(why, fmt.Sprintf("the tree is not whole at the end: %s: %v", p.Name, err))
		}
	}
	return why
}
