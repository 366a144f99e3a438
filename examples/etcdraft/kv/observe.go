package kv

import (
	"slices"

	"github.com/zeebo/xxh3"
)

// Observation is what a node exposes: what the properties read, the
// fingerprint hashes and trace show prints. It is complete for this
// store's configuration (see the package documentation): two nodes with
// equal observations do the same for every input.
type Observation struct {
	// Term, Vote and Commit are raft's HardState.
	Term, Vote, Commit uint64
	// Lead and State are raft's SoftState (State as
	// raft.StateType.String(): StateFollower, StateCandidate,
	// StateLeader).
	Lead  uint64
	State string
	// SnapIndex and SnapTerm are the snapshot the log starts after; Log
	// is the log after it (Log[i] is entry SnapIndex+1+i).
	SnapIndex, SnapTerm uint64
	Log                 []Entry
	// Progress is a leader's view of every member, by ID (empty on a
	// follower). Votes are the answers a candidate has received in this
	// term, its own included (empty otherwise).
	Progress []Progress
	Votes    map[uint64]bool
	// App is the application's state.
	App AppState
}

// Entry is one log entry as the observation holds it: its term and a
// hash of its type and data.
type Entry struct {
	Term, Hash uint64
}

// Progress is a leader's view of one member: raft's tracker.Progress
// without what cannot change what it does in this configuration
// (RecentActive matters only with CheckQuorum; the in-flight window only
// once full, and it holds 256 messages), and with the commit index last
// sent to it, which tracker.Progress does not export.
type Progress struct {
	ID, Match, Next uint64
	State           string
	Paused          bool
	PendingSnapshot uint64
	SentCommit      uint64
}

// AppState is the application's part of an observation.
type AppState struct {
	KV          map[string]string
	Applied     []EntryID
	RaftApplied uint64
	Seq         uint64
	Pending     []Proposal
	Last        map[uint64]uint64
	LedTerms    []uint64
}

// Observe implements replayed.Object.
func (s *store) Observe() Observation {
	st := s.rn.Status()
	snap, _ := s.storage.Snapshot()
	o := Observation{
		Term: st.GetTerm(), Vote: st.GetVote(), Commit: st.GetCommit(),
		Lead: st.Lead, State: st.RaftState.String(),
		SnapIndex: snap.GetMetadata().GetIndex(), SnapTerm: snap.GetMetadata().GetTerm(),
	}
	for _, e := range s.entries() {
		h := xxh3.New()
		_, _ = h.Write([]byte{byte(e.GetType())})
		_, _ = h.Write(e.GetData())
		o.Log = append(o.Log, Entry{Term: e.GetTerm(), Hash: h.Sum64()})
	}
	for id, pr := range st.Progress {
		o.Progress = append(o.Progress, Progress{ID: id, Match: pr.Match, Next: pr.Next, State: pr.State.String(),
			Paused: pr.IsPaused(), PendingSnapshot: pr.PendingSnapshot, SentCommit: sentCommit(pr.CanBumpCommit, pr.Next)})
	}
	slices.SortFunc(o.Progress, func(a, b Progress) int { return int(a.ID) - int(b.ID) })
	if len(s.votes) > 0 {
		o.Votes = make(map[uint64]bool, len(s.votes))
		for k, v := range s.votes {
			o.Votes[k] = v
		}
	}
	a := s.app.clone()
	o.App = AppState(a)
	return o
}

// sentCommit recovers a progress's commit index last sent, which raft
// keeps unexported, from CanBumpCommit(i) = i > sentCommit && sentCommit
// < next-1: the smallest i it accepts is sentCommit+1. When it accepts
// none, sentCommit >= next-1, and this store's unbounded MsgApp size
// keeps it there: next-1.
func sentCommit(canBump func(uint64) bool, next uint64) uint64 {
	if next <= 1 || !canBump(next-1) {
		return max(next, 1) - 1
	}
	lo, hi := uint64(0), next-1 // canBump(hi) holds; find the smallest
	for lo+1 < hi {
		mid := lo + (hi-lo)/2
		if canBump(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	if canBump(lo) {
		return lo - 1
	}
	return hi - 1
}
