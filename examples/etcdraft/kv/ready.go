package kv

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// handleReady does what raft asks, in the order it asks it: persist the
// snapshot, HardState and entries to the MemoryStorage, send the
// messages, apply the committed entries, and advance; then it answers
// the client operations the application completed.
func (s *store) handleReady(env node.Env, rd raft.Ready) {
	if !raft.IsEmptySnap(rd.Snapshot) {
		if err := s.storage.ApplySnapshot(rd.Snapshot); err != nil {
			panic(fmt.Sprintf("etcdkv: applying raft's snapshot: %v", err)) // raft hands out only newer ones
		}
		if err := s.app.restoreSnapshot(s.opts, rd.Snapshot); err != nil {
			env.Logger().Warn("etcdkv: a snapshot's data does not decode", "err", err)
		}
	}
	if !raft.IsEmptyHardState(rd.HardState) {
		if err := s.storage.SetHardState(rd.HardState); err != nil {
			panic(fmt.Sprintf("etcdkv: storing the HardState: %v", err))
		}
	}
	var done []completed
	if err := s.storage.Append(rd.Entries); err != nil {
		panic(fmt.Sprintf("etcdkv: appending entries: %v", err))
	}
	if !s.opts.ApplyCommitted {
		// The planted bug: an entry is applied as soon as it is in the
		// log, before a majority has it, so one that a new leader later
		// overwrites has already changed the store.
		done = s.app.apply(s.self, rd.Entries)
	}
	for _, m := range rd.Messages {
		s.send(env, m)
	}
	confChanged := false
	for _, e := range rd.CommittedEntries {
		changed, err := s.applyConfChange(e)
		if err != nil {
			panic(fmt.Sprintf("etcdkv: a committed conf change does not decode: %v", err)) // the store proposed it
		}
		confChanged = confChanged || changed
	}
	if n := len(rd.CommittedEntries); n > 0 {
		if s.opts.ApplyCommitted {
			done = s.app.apply(s.self, rd.CommittedEntries)
		}
		s.app.RaftApplied = rd.CommittedEntries[n-1].GetIndex()
	}
	if confChanged {
		// A member added later catches up from the leader's snapshot,
		// which raft refuses unless its configuration names the member:
		// the snapshot follows the configuration.
		s.snapshotAt(s.app.RaftApplied)
	}
	for _, rs := range rd.ReadStates {
		s.app.readConfirmed(s.self, rs)
	}
	if c, ok := s.app.completeRead(); ok {
		done = append(done, c)
	}
	if rd.SoftState != nil && rd.SoftState.RaftState == raft.StateLeader {
		s.app.LedTerms = append(s.app.LedTerms, s.rn.BasicStatus().GetTerm())
	}
	s.rn.Advance(rd)
	s.maybeCompact()
	s.respond(env, done)
}

// respond completes the client operations the application applied, and
// proposes the next of the queue (after Advance: raft takes a proposal
// between two Readys).
func (s *store) respond(env node.Env, done []completed) {
	for _, c := range done {
		node.Respond(env, c.op, c.result)
	}
	if len(done) > 0 && len(s.app.Pending) > 0 {
		s.propose(s.app.Pending[0])
	}
}

// send hands a raft message to crystalball, which carries it to its
// addressee.
func (s *store) send(env node.Env, m *raftpb.Message) {
	b, err := marshalDeterministic.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("etcdkv: encoding a raft message: %v", err))
	}
	env.Send(node.ID(m.GetTo()), Raft{Msg: b})
}

// maybeCompact snapshots the store into raft's log once
// Options.Snapshots.Every entries have applied since the last snapshot,
// and compacts the log up to Snapshots.CatchUpEntries before it.
func (s *store) maybeCompact() {
	every := s.opts.Snapshots.Every
	if every < 0 {
		return
	}
	snap, err := s.storage.Snapshot()
	if err != nil {
		return
	}
	applied := s.app.RaftApplied
	if applied < snap.GetMetadata().GetIndex()+uint64(every) {
		return
	}
	if !s.snapshotAt(applied) {
		return
	}
	keep := uint64(max(s.opts.Snapshots.CatchUpEntries, 0))
	if applied > keep {
		_ = s.storage.Compact(applied - keep) // ErrCompacted: already shorter
	}
}

// snapshotAt makes the storage's snapshot the store at applied, with the
// configuration the application applied, and reports whether it did (not
// when the snapshot is that recent already).
func (s *store) snapshotAt(applied uint64) bool {
	data, err := node.AppendCanonical(nil, snapshotData{KV: s.app.KV, Last: s.app.Last})
	if err != nil {
		panic(fmt.Sprintf("etcdkv: encoding the store: %v", err))
	}
	_, err = s.storage.CreateSnapshot(applied, s.app.conf(s.opts).confState(), data)
	return err == nil
}
