package kv

import (
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/replayed"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Timer names.
const (
	timerElection = "election"
	timerTick     = "tick"
	timerRetry    = "retry"
	timerWrite    = "write"
)

// electionTicks keeps raft's own, crypto/rand-randomized election timeout
// out of the way: 2^30 ticks of a leader (only a leader ticks) is decades.
const electionTicks = 1 << 30

// store is one node: a RawNode over its MemoryStorage and the
// application (the key-value map) the committed entries are applied to.
// It is an opaque object to crystalball: replayed.Object, built by
// newStore.
type store struct {
	opts    Options
	self    uint64
	storage *raft.MemoryStorage
	rn      *raft.RawNode
	app     app
	// votes mirrors a candidate's vote tally, which raft does not export:
	// the first answer of each voter in votesTerm.
	votes     map[uint64]bool
	votesTerm uint64
}

var _ replayed.Object[Observation] = (*store)(nil)

// newStore builds node self's store from its durable bytes (nil: a first
// start, with the cluster's initial configuration) or an image
// (AppendImage).
func newStore(opts Options, self node.ID, durableBytes []byte) (*store, error) {
	s := &store{opts: opts, self: uint64(self), storage: raft.NewMemoryStorage()}
	applied, lead := uint64(0), uint64(0)
	if len(durableBytes) > 0 && durableBytes[0] == imageTag {
		im, err := decodeImage(durableBytes[1:])
		if err != nil {
			return nil, err
		}
		durableBytes, lead = im.Durable, im.Lead
	}
	if durableBytes == nil {
		voters := make([]uint64, opts.Nodes)
		for i := range voters {
			voters[i] = uint64(i + 1)
		}
		// Every member starts in term 1 from the same snapshot at index 1,
		// which holds the configuration (etcd's bootstrap does the same
		// with conf-change entries).
		snap := &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{
			Index: proto.Uint64(1), Term: proto.Uint64(1), ConfState: &raftpb.ConfState{Voters: voters}}}
		if err := s.storage.ApplySnapshot(snap); err != nil {
			return nil, fmt.Errorf("etcdkv: initial snapshot: %w", err)
		}
		if err := s.storage.SetHardState(&raftpb.HardState{Term: proto.Uint64(1), Commit: proto.Uint64(1)}); err != nil {
			return nil, err
		}
		s.app = newApp()
	} else {
		d, err := decodeDurable(durableBytes)
		if err != nil {
			return nil, err
		}
		if err := d.restore(s.storage); err != nil {
			return nil, err
		}
		s.app, applied = d.App, d.App.RaftApplied
	}
	rn, err := raft.NewRawNode(&raft.Config{
		ID:              s.self,
		ElectionTick:    electionTicks,
		HeartbeatTick:   1,
		Storage:         s.storage,
		Applied:         applied,
		MaxSizePerMsg:   1 << 62, // every MsgApp carries all it can: sentCommit stays below Next
		MaxInflightMsgs: 256,
		Logger:          quietLogger{},
	})
	if err != nil {
		return nil, fmt.Errorf("etcdkv: raft: %w", err)
	}
	s.rn = rn
	if err := s.follow(lead); err != nil {
		return nil, err
	}
	return s, nil
}

// Init implements replayed.Object: a node starts as a follower waiting
// for a leader.
func (s *store) Init(env node.Env) {
	s.armElection(env)
	s.settle(env)
}

// HandleMessage implements replayed.Object: a raft message from a peer.
func (s *store) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	r, ok := msg.(Raft)
	if !ok {
		return
	}
	var m raftpb.Message
	if err := proto.Unmarshal(r.Msg, &m); err != nil || m.GetFrom() != uint64(from) || m.GetTo() != s.self || raft.IsLocalMsg(m.GetType()) {
		env.Logger().Warn("etcdkv: dropping a malformed raft message", "from", from)
		return
	}
	before := s.rn.BasicStatus()
	if err := s.rn.Step(&m); err != nil {
		return // a response from a peer not in the configuration, say
	}
	after := s.rn.BasicStatus()
	if after.RaftState == raft.StateCandidate && m.GetType() == raftpb.MsgVoteResp && m.GetTerm() == after.GetTerm() &&
		before.RaftState == raft.StateCandidate && before.GetTerm() == after.GetTerm() {
		if _, seen := s.votes[m.GetFrom()]; !seen {
			s.votes[m.GetFrom()] = !m.GetReject()
		}
	}
	switch m.GetType() {
	case raftpb.MsgApp, raftpb.MsgHeartbeat, raftpb.MsgSnap:
		if after.Lead == m.GetFrom() && after.GetTerm() == m.GetTerm() {
			s.armElection(env) // heard from the leader
		}
	}
	s.settle(env)
}

// HandleTimer implements replayed.Object.
func (s *store) HandleTimer(env node.Env, name string) {
	switch name {
	case timerElection:
		if s.rn.BasicStatus().RaftState != raft.StateLeader {
			_ = s.rn.Campaign() // a local message: never fails
		}
		s.armElection(env)
	case timerTick:
		s.rn.Tick()
	case timerRetry:
		if len(s.app.Pending) > 0 {
			s.propose(s.app.Pending[0])
		}
	case timerWrite:
		s.call(env, Proposal{Key: fmt.Sprintf("k%d", s.self), Value: fmt.Sprintf("v%d.%d", s.self, s.app.Seq+1)})
	}
	s.settle(env)
}

// HandleApp implements replayed.Object: Put proposes a write, Get a read
// (or, with Options.LocalReads, answers from the applied map at once).
func (s *store) HandleApp(env node.Env, call node.Message) {
	switch c := call.(type) {
	case Put:
		s.call(env, Proposal{Key: c.Key, Value: c.Value})
	case Get:
		if s.opts.LocalReads {
			node.Invoke(env, c)
			node.Respond(env, c, Value{Value: s.app.KV[c.Key]})
			return
		}
		s.call(env, Proposal{Key: c.Key, Read: true})
	default:
		return
	}
	s.settle(env)
}

// call starts a client operation of this node's: it is invoked now and
// queued; the queue's first is proposed (the rest wait for it to apply).
func (s *store) call(env node.Env, p Proposal) {
	s.app.Seq++
	p.Node, p.Seq = s.self, s.app.Seq
	node.Invoke(env, p.op())
	s.app.Pending = append(s.app.Pending, p)
	if len(s.app.Pending) == 1 {
		s.propose(p)
	}
}

// HandleTransportError implements replayed.Object: raft learns the peer
// is unreachable (a leader probes it again).
func (s *store) HandleTransportError(env node.Env, peer node.ID) {
	s.rn.ReportUnreachable(uint64(peer))
	s.settle(env)
}

// propose hands p to raft; without a leader raft drops it and the retry
// timer proposes it again.
func (s *store) propose(p Proposal) {
	_ = s.rn.Propose(p.encode()) // ErrProposalDropped: retried
}

// armElection (re)schedules the election timeout with a fresh jitter.
func (s *store) armElection(env node.Env) {
	var jitter time.Duration
	if s.opts.ElectionJitter > 0 {
		jitter = time.Duration(env.Rand().IntN(int(s.opts.ElectionJitter/time.Millisecond)+1)) * time.Millisecond
	}
	env.SetTimer(timerElection, s.opts.ElectionTimeout+jitter)
}

// settle handles raft's Ready until there is none, then sets the timers
// the node's role needs: a leader ticks, anyone else waits for one, and a
// node with calls it has not applied retries the first of them.
func (s *store) settle(env node.Env) {
	for s.rn.HasReady() {
		s.handleReady(env, s.rn.Ready())
	}
	st := s.rn.BasicStatus()
	if st.RaftState == raft.StateLeader {
		env.CancelTimer(timerElection)
		if !env.TimerScheduled(timerTick) {
			env.SetTimer(timerTick, s.opts.Heartbeat)
		}
	} else {
		env.CancelTimer(timerTick)
		if !env.TimerScheduled(timerElection) {
			s.armElection(env)
		}
	}
	if st.RaftState != raft.StateCandidate || st.GetTerm() != s.votesTerm {
		s.votes, s.votesTerm = nil, 0
		if st.RaftState == raft.StateCandidate {
			s.votes, s.votesTerm = map[uint64]bool{s.self: true}, st.GetTerm()
		}
	}
	switch {
	case len(s.app.Pending) == 0:
		env.CancelTimer(timerRetry)
		if s.app.Seq > 0 && s.app.Seq < uint64(max(s.opts.Writes, 0)) && s.opts.WriteEvery > 0 && !env.TimerScheduled(timerWrite) {
			env.SetTimer(timerWrite, s.opts.WriteEvery)
		}
	case !env.TimerScheduled(timerRetry):
		env.SetTimer(timerRetry, s.opts.Retry)
	}
}

// quietLogger silences raft (a run logs through crystalball); Fatal and
// Panic panic, as raft expects them not to return.
type quietLogger struct{}

func (quietLogger) Debug(...any)                   {}
func (quietLogger) Debugf(string, ...any)          {}
func (quietLogger) Error(...any)                   {}
func (quietLogger) Errorf(string, ...any)          {}
func (quietLogger) Info(...any)                    {}
func (quietLogger) Infof(string, ...any)           {}
func (quietLogger) Warning(...any)                 {}
func (quietLogger) Warningf(string, ...any)        {}
func (quietLogger) Fatal(v ...any)                 { panic(fmt.Sprint(v...)) }
func (quietLogger) Fatalf(format string, v ...any) { panic(fmt.Sprintf(format, v...)) }
func (quietLogger) Panic(v ...any)                 { panic(fmt.Sprint(v...)) }
func (quietLogger) Panicf(format string, v ...any) { panic(fmt.Sprintf(format, v...)) }
