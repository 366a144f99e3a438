package kv

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/vmihailenco/msgpack/v5"
	"go.etcd.io/raft/v3/raftpb"
)

// app is the replicated state machine: the key-value map and what it
// applied. It is part of the store's durable state (a real store writes
// its applied state to disk and restarts raft from its applied index).
type app struct {
	KV map[string]string
	// Applied is every entry the application applied, in order: what
	// state-machine safety compares across nodes.
	Applied []EntryID
	// RaftApplied is the last index raft handed over as committed: where
	// raft restarts from (raft.Config.Applied).
	RaftApplied uint64
	// Seq numbers this node's proposals; Pending are those not applied
	// yet (retried until they are).
	Seq     uint64
	Pending []Proposal
	// LedTerms are the terms this node was elected leader in.
	LedTerms []uint64
}

func newApp() app { return app{KV: map[string]string{}} }

// EntryID names a log entry: its index and term.
type EntryID struct {
	Index, Term uint64
}

// Proposal is a write proposed by node Node, its Seq-th.
type Proposal struct {
	Node, Seq  uint64
	Key, Value string
}

// encode is the entry data of p.
func (p Proposal) encode() []byte {
	b, err := node.AppendCanonical(nil, p)
	if err != nil {
		panic(fmt.Sprintf("etcdkv: encoding a proposal: %v", err)) // strings and integers always encode
	}
	return b
}

// decodeProposal decodes an entry's data; ok is false for an empty entry
// (a new leader's) or data that is not a proposal.
func decodeProposal(data []byte) (Proposal, bool) {
	var p Proposal
	if len(data) == 0 || node.CheckMsgpack(data, node.MaxMsgpackDepth) != nil || msgpack.Unmarshal(data, &p) != nil {
		return Proposal{}, false
	}
	return p, true
}

// apply applies entries to the map, in order, and drops this node's
// proposals they carry from Pending.
func (a *app) apply(entries []*raftpb.Entry) {
	for _, e := range entries {
		a.Applied = append(a.Applied, EntryID{Index: e.GetIndex(), Term: e.GetTerm()})
		if e.GetType() != raftpb.EntryNormal {
			continue
		}
		p, ok := decodeProposal(e.GetData())
		if !ok {
			continue
		}
		a.KV[p.Key] = p.Value
		for i, q := range a.Pending {
			if q.Node == p.Node && q.Seq == p.Seq {
				a.Pending = append(a.Pending[:i:i], a.Pending[i+1:]...)
				break
			}
		}
	}
}

// restoreSnapshot replaces the map with a snapshot's (raft sent one to a
// follower that fell behind a compaction).
func (a *app) restoreSnapshot(snap *raftpb.Snapshot) error {
	var kv map[string]string
	if len(snap.GetData()) > 0 {
		if err := node.CheckMsgpack(snap.GetData(), node.MaxMsgpackDepth); err != nil {
			return err
		}
		if err := msgpack.Unmarshal(snap.GetData(), &kv); err != nil {
			return err
		}
	}
	if kv == nil {
		kv = map[string]string{}
	}
	a.KV = kv
	idx := snap.GetMetadata().GetIndex()
	a.Applied = append(a.Applied, EntryID{Index: idx, Term: snap.GetMetadata().GetTerm()})
	a.RaftApplied = idx
	return nil
}

// clone copies a deeply (an observation must not alias the store).
func (a *app) clone() app {
	out := *a
	out.KV = make(map[string]string, len(a.KV))
	for k, v := range a.KV {
		out.KV[k] = v
	}
	out.Applied = append([]EntryID(nil), a.Applied...)
	out.Pending = append([]Proposal(nil), a.Pending...)
	out.LedTerms = append([]uint64(nil), a.LedTerms...)
	return out
}
