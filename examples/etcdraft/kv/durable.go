package kv

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/vmihailenco/msgpack/v5"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// durable is what a node keeps on stable storage: raft's HardState,
// snapshot and entries (protobuf-encoded, as raft's WAL would hold them)
// and the application's applied state.
type durable struct {
	HardState []byte
	Snapshot  []byte
	Entries   [][]byte
	App       app
}

// AppendDurable implements replayed.DurableObject.
func (s *store) AppendDurable(dst []byte) []byte {
	hs, _, err := s.storage.InitialState()
	if err != nil {
		panic(fmt.Sprintf("etcdkv: reading the HardState: %v", err))
	}
	snap, err := s.storage.Snapshot()
	if err != nil {
		panic(fmt.Sprintf("etcdkv: reading the snapshot: %v", err))
	}
	ents := s.entriesAfter(snap.GetMetadata().GetIndex())
	d := durable{HardState: mustMarshal(hs), Snapshot: mustMarshal(snap), Entries: make([][]byte, len(ents)), App: s.app.clone()}
	for i, e := range ents {
		d.Entries[i] = mustMarshal(e)
	}
	out, err := node.AppendCanonical(dst, d)
	if err != nil {
		panic(fmt.Sprintf("etcdkv: encoding the durable state: %v", err))
	}
	return out
}

// entriesAfter returns the stored log after index i. The durable state
// holds the log after the snapshot, as etcd's WAL does: the entries a
// compaction kept before the snapshot for followers slightly behind
// (SnapshotOptions.CatchUpEntries) are not restored at a restart, in etcd
// or here.
func (s *store) entriesAfter(i uint64) []*raftpb.Entry {
	ents := s.entries()
	for len(ents) > 0 && ents[0].GetIndex() <= i {
		ents = ents[1:]
	}
	return ents
}

// entries returns the stored log, from its first index (the snapshot's
// next, or earlier when a compaction kept entries before it).
func (s *store) entries() []*raftpb.Entry {
	first, _ := s.storage.FirstIndex()
	last, _ := s.storage.LastIndex()
	if last < first {
		return nil
	}
	ents, err := s.storage.Entries(first, last+1, 1<<62)
	if err != nil {
		panic(fmt.Sprintf("etcdkv: reading the log [%d, %d]: %v", first, last, err))
	}
	return ents
}

func mustMarshal(m proto.Message) []byte {
	b, err := marshalDeterministic.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("etcdkv: encoding %T: %v", m, err))
	}
	return b
}

// decodeDurable decodes durable bytes. They may come from a checkpoint a
// peer sent: every part is checked before raft sees it.
func decodeDurable(b []byte) (*durable, error) {
	if err := node.CheckMsgpack(b, node.MaxMsgpackDepth); err != nil {
		return nil, fmt.Errorf("etcdkv: durable state: %w", err)
	}
	var d durable
	if err := msgpack.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("etcdkv: durable state: %w", err)
	}
	if d.App.KV == nil {
		d.App.KV = map[string]string{}
	}
	return &d, nil
}

// restore puts the durable state into an empty storage, checking that
// raft will accept it (raft panics on an inconsistent log).
func (d *durable) restore(ms *raft.MemoryStorage) error {
	var hs raftpb.HardState
	var snap raftpb.Snapshot
	if err := proto.Unmarshal(d.HardState, &hs); err != nil {
		return fmt.Errorf("etcdkv: durable HardState: %w", err)
	}
	if err := proto.Unmarshal(d.Snapshot, &snap); err != nil {
		return fmt.Errorf("etcdkv: durable snapshot: %w", err)
	}
	ents := make([]*raftpb.Entry, len(d.Entries))
	for i, b := range d.Entries {
		ents[i] = new(raftpb.Entry)
		if err := proto.Unmarshal(b, ents[i]); err != nil {
			return fmt.Errorf("etcdkv: durable entry %d: %w", i, err)
		}
	}
	si, st := snap.GetMetadata().GetIndex(), snap.GetMetadata().GetTerm()
	if si == 0 {
		// A joiner no leader has added yet (MembershipOptions) keeps its
		// HardState alone: no snapshot, no log, nothing applied.
		if len(ents) > 0 || hs.GetCommit() != 0 || d.App.RaftApplied != 0 {
			return fmt.Errorf("etcdkv: durable log or commit index without a snapshot")
		}
		return ms.SetHardState(&hs)
	}
	if len(snap.GetMetadata().GetConfState().GetVoters()) == 0 {
		return fmt.Errorf("etcdkv: durable snapshot without voters")
	}
	prev, prevTerm := si, st
	for _, e := range ents {
		if e.GetIndex() != prev+1 || e.GetTerm() < prevTerm {
			return fmt.Errorf("etcdkv: durable entry %d (term %d) after %d (term %d)", e.GetIndex(), e.GetTerm(), prev, prevTerm)
		}
		prev, prevTerm = e.GetIndex(), e.GetTerm()
	}
	if hs.GetCommit() > prev || (hs.GetCommit() != 0 && hs.GetCommit() < si) || hs.GetTerm() < prevTerm {
		return fmt.Errorf("etcdkv: durable HardState %v against a log up to %d (term %d) from %d", &hs, prev, prevTerm, si)
	}
	if a := d.App.RaftApplied; a != 0 && (a < si || a > max(hs.GetCommit(), si)) {
		return fmt.Errorf("etcdkv: applied index %d outside [%d, %d]", a, si, hs.GetCommit())
	}
	if err := ms.ApplySnapshot(&snap); err != nil {
		return fmt.Errorf("etcdkv: durable snapshot: %w", err)
	}
	if err := ms.SetHardState(&hs); err != nil {
		return err
	}
	return ms.Append(ents)
}
