package kv

import (
	"fmt"
	"maps"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/vmihailenco/msgpack/v5"
	"go.etcd.io/raft/v3"
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
	// yet, oldest first: the client's queue. Only the first is proposed
	// (and retried until it applies), so a node's proposals apply in Seq
	// order.
	Seq     uint64
	Pending []Proposal
	// ReadAt is the read index raft confirmed for Pending[0], a ReadIndex
	// read (0: none yet): the read completes once RaftApplied reaches it.
	ReadAt uint64 `msgpack:",omitempty"`
	// Last is, by proposing node, the Seq of its last proposal applied: a
	// retried proposal committed twice applies once (a second Put of an
	// old value would undo the writes after it). Nil until the first.
	Last map[uint64]uint64
	// LedTerms are the terms this node was elected leader in.
	LedTerms []uint64
	// Conf is the configuration the applied entries made, when it is not
	// the initial one (nil: the initial voters; see conf): conf changes
	// are replicated state, as etcd's membership store is.
	Conf *Conf `msgpack:",omitempty"`
}

func newApp() app { return app{KV: map[string]string{}} }

// EntryID names a log entry: its index and term.
type EntryID struct {
	Index, Term uint64
}

// Proposal is a client operation proposed by node Node, its Seq-th: a
// write of Value under Key, or (Read) a read of Key, which the log orders
// among the writes.
type Proposal struct {
	Node, Seq  uint64
	Key, Value string
	Read       bool `msgpack:",omitempty"`
}

// op is the client operation p carries, as the node invoked it.
func (p Proposal) op() node.Message {
	if p.Read {
		return Get{Key: p.Key}
	}
	return Put{Key: p.Key, Value: p.Value}
}

// completed is one of this node's operations the application applied,
// with its result (a read's Value, nil for a write).
type completed struct {
	op     node.Message
	result node.Message
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

// apply applies entries, in order, and returns the operations of node
// self's they completed (dropped from Pending). A proposal at or below
// its node's Last is a copy of one applied already: it changes nothing.
func (a *app) apply(self uint64, entries []*raftpb.Entry) []completed {
	var done []completed
	for _, e := range entries {
		a.Applied = append(a.Applied, EntryID{Index: e.GetIndex(), Term: e.GetTerm()})
		if e.GetType() != raftpb.EntryNormal {
			continue
		}
		p, ok := decodeProposal(e.GetData())
		if !ok || p.Seq <= a.Last[p.Node] {
			continue
		}
		if a.Last == nil {
			a.Last = map[uint64]uint64{}
		}
		a.Last[p.Node] = p.Seq
		var result node.Message
		if p.Read {
			result = Value{Value: a.KV[p.Key]}
		} else {
			a.KV[p.Key] = p.Value
		}
		if p.Node != self {
			continue
		}
		for i, q := range a.Pending {
			if q.Seq == p.Seq {
				a.Pending = append(a.Pending[:i:i], a.Pending[i+1:]...)
				done = append(done, completed{op: p.op(), result: result})
				break
			}
		}
	}
	return done
}

// readContext is the request context of a ReadIndex read: it names the
// read (its node and Seq), so that the read state raft returns is matched
// to the read it confirms.
func (p Proposal) readContext() []byte {
	return Proposal{Node: p.Node, Seq: p.Seq}.encode()
}

// readConfirmed records a read state raft returned for this node's first
// pending read (one of a retried read's several, or of an earlier
// read, confirms nothing new).
func (a *app) readConfirmed(self uint64, rs raft.ReadState) {
	p, ok := decodeProposal(rs.RequestCtx)
	if !ok || p.Node != self || len(a.Pending) == 0 || a.ReadAt != 0 {
		return
	}
	if q := a.Pending[0]; q.Read && q.Seq == p.Seq {
		a.ReadAt = max(rs.Index, 1)
	}
}

// completeRead completes the first pending read once the application
// has applied up to its confirmed read index: its value is the map's
// then, which no write committed before the read began can be missing
// from (raft's ReadIndex guarantee).
func (a *app) completeRead() (completed, bool) {
	if a.ReadAt == 0 || a.RaftApplied < a.ReadAt || len(a.Pending) == 0 {
		return completed{}, false
	}
	p := a.Pending[0]
	a.Pending, a.ReadAt = a.Pending[1:], 0
	return completed{op: p.op(), result: Value{Value: a.KV[p.Key]}}, true
}

// snapshotData is what a snapshot of the application holds: the map and
// the proposals' high-water marks (both replicated state).
type snapshotData struct {
	KV   map[string]string
	Last map[uint64]uint64
}

// restoreSnapshot replaces the map and the configuration with a
// snapshot's (raft sent one to a follower that fell behind a compaction,
// or to a joiner).
func (a *app) restoreSnapshot(o Options, snap *raftpb.Snapshot) error {
	a.setConf(o, confOf(snap.GetMetadata().GetConfState()))
	var d snapshotData
	if len(snap.GetData()) > 0 {
		if err := node.CheckMsgpack(snap.GetData(), node.MaxMsgpackDepth); err != nil {
			return err
		}
		if err := msgpack.Unmarshal(snap.GetData(), &d); err != nil {
			return err
		}
	}
	if d.KV == nil {
		d.KV = map[string]string{}
	}
	a.KV, a.Last = d.KV, d.Last
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
	if a.Last != nil {
		out.Last = maps.Clone(a.Last)
	}
	if a.Conf != nil {
		c := Conf{Voters: slices.Clone(a.Conf.Voters), Learners: slices.Clone(a.Conf.Learners)}
		out.Conf = &c
	}
	return out
}
