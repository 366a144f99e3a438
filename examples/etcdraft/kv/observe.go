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
	// Retained counts the entries a compaction kept up to the snapshot
	// (SnapshotOptions.CatchUpEntries): a leader sends them to a follower
	// slightly behind instead of the snapshot.
	Retained uint64
	// Progress is a leader's view of every member, by ID (empty on a
	// follower). Votes are the answers a candidate has received in this
	// term, its own included (empty otherwise).
	Progress []Progress
	Votes    map[uint64]bool
	// Raft is the state raft keeps unexported that decides what it does
	// next: its election and heartbeat counters and its randomized
	// election timeout, in ticks; a leader's pending transfer, its
	// uncommitted bytes and its reads not yet confirmed. A follower's
	// election counter is shown at most at 2×ElectionTick, past every
	// timeout raft draws: beyond it raft makes no difference.
	Raft hidden
	// App is the application's state.
	App AppState
}

// Entry is one log entry as the observation holds it: its term and a
// hash of its type and data.
type Entry struct {
	Term, Hash uint64
}

// Progress is a leader's view of one member: raft's tracker.Progress
// with the commit index last sent to it, which tracker.Progress does not
// export, and its in-flight window as a count of messages and bytes.
type Progress struct {
	ID, Match, Next         uint64
	State                   string
	Paused, RecentActive    bool
	PendingSnapshot         uint64
	SentCommit              uint64
	Inflight, InflightBytes uint64
}

// AppState is the application's part of an observation.
type AppState struct {
	KV          map[string]string
	Applied     []EntryID
	RaftApplied uint64
	Seq         uint64
	Pending     []Proposal
	ReadAt      uint64
	Last        map[uint64]uint64
	LedTerms    []uint64
	// Conf is the configuration the node applied when it is not the
	// initial one (Options.Membership): nil, and absent from the
	// encoding, in a cluster that never changes.
	Conf *Conf `msgpack:",omitempty"`
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
	if first, _ := s.storage.FirstIndex(); first <= o.SnapIndex {
		o.Retained = o.SnapIndex - first + 1
	}
	for _, e := range s.entriesAfter(o.SnapIndex) {
		h := xxh3.New()
		_, _ = h.Write([]byte{byte(e.GetType())})
		_, _ = h.Write(e.GetData())
		o.Log = append(o.Log, Entry{Term: e.GetTerm(), Hash: h.Sum64()})
	}
	for id, pr := range st.Progress {
		p := Progress{ID: id, Match: pr.Match, Next: pr.Next, State: pr.State.String(), Paused: pr.IsPaused(),
			RecentActive: pr.RecentActive, PendingSnapshot: pr.PendingSnapshot, SentCommit: internals.sentCommit(&pr)}
		if pr.Inflights != nil {
			p.Inflight, p.InflightBytes = uint64(pr.Inflights.Count()), internals.inflightBytes(pr.Inflights)
		}
		o.Progress = append(o.Progress, p)
	}
	o.Raft = internals.read(s.rn)
	if e := s.opts.Raft.ElectionTick; o.State != "StateLeader" {
		o.Raft.ElectionElapsed = min(o.Raft.ElectionElapsed, 2*e)
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
