package kv

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/replayed"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Timer names.
const (
	timerTick  = "tick"
	timerRetry = "retry"
	timerWrite = "write"
)

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
	clock     raftClock
}

var _ replayed.Object[Observation] = (*store)(nil)

// newStore builds node self's store from its durable bytes (nil: a first
// start, with the cluster's initial configuration) or an image
// (AppendImage).
func newStore(opts Options, self node.ID, durableBytes []byte) (*store, error) {
	if internalsErr != nil {
		return nil, internalsErr
	}
	s := &store{opts: opts, self: uint64(self), storage: raft.NewMemoryStorage()}
	applied := uint64(0)
	var im *image
	if len(durableBytes) > 0 && durableBytes[0] == imageTag {
		var err error
		if im, err = decodeImage(durableBytes[1:]); err != nil {
			return nil, err
		}
		durableBytes = im.Durable
	}
	if durableBytes == nil {
		if err := s.bootstrap(); err != nil {
			return nil, err
		}
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
	rn, err := raft.NewRawNode(s.raftConfig(applied))
	if err != nil {
		return nil, fmt.Errorf("etcdkv: raft: %w", err)
	}
	s.rn = rn
	if im != nil {
		if err := s.restoreImage(im); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// bootstrap gives a first start the cluster's initial configuration:
// every initial voter starts in term 1 from the same snapshot at index 1,
// which holds the configuration (etcd's bootstrap does the same with
// conf-change entries); a joiner starts empty, as etcd's member added
// with `member add` does.
func (s *store) bootstrap() error {
	s.app = newApp()
	if s.self > uint64(s.opts.initialVoters()) {
		return nil // a joiner: no log and no configuration until a leader adds it
	}
	snap := &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{
		Index: proto.Uint64(1), Term: proto.Uint64(1), ConfState: initialConf(s.opts).confState()}}
	if err := s.storage.ApplySnapshot(snap); err != nil {
		return fmt.Errorf("etcdkv: initial snapshot: %w", err)
	}
	if err := s.storage.SetHardState(&raftpb.HardState{Term: proto.Uint64(1), Commit: proto.Uint64(1)}); err != nil {
		return fmt.Errorf("etcdkv: initial HardState: %w", err)
	}
	return nil
}

// raftConfig is the RawNode's configuration: Options.Raft, the storage,
// and the index the application has applied.
func (s *store) raftConfig(applied uint64) *raft.Config {
	r := s.opts.Raft
	return &raft.Config{
		ID:                        s.self,
		ElectionTick:              r.ElectionTick,
		HeartbeatTick:             r.HeartbeatTick,
		Storage:                   s.storage,
		Applied:                   applied,
		MaxSizePerMsg:             r.MaxSizePerMsg,
		MaxInflightMsgs:           r.MaxInflightMsgs,
		MaxInflightBytes:          r.MaxInflightBytes,
		MaxUncommittedEntriesSize: r.MaxUncommittedEntriesSize,
		PreVote:                   r.PreVote,
		CheckQuorum:               r.CheckQuorum,
		ReadOnlyOption:            raft.ReadOnlySafe,
		Logger:                    quietLogger{},
	}
}

// Init implements replayed.Object: a node starts as a follower waiting
// for a leader, its raft clock starting now.
func (s *store) Init(env node.Env) {
	s.clock.start(env.Now())
	s.pinTimeout(env)
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
	s.catchUp(env)
	before := s.rn.BasicStatus()
	err := s.rn.Step(&m)
	s.pinTimeout(env)
	if err != nil {
		s.settle(env)
		return // a response from a peer not in the configuration, say
	}
	after := s.rn.BasicStatus()
	if after.RaftState == raft.StateCandidate && m.GetType() == raftpb.MsgVoteResp && m.GetTerm() == after.GetTerm() &&
		before.RaftState == raft.StateCandidate && before.GetTerm() == after.GetTerm() {
		if _, seen := s.votes[m.GetFrom()]; !seen {
			s.votes[m.GetFrom()] = !m.GetReject()
		}
	}
	s.settle(env)
}

// HandleTimer implements replayed.Object.
func (s *store) HandleTimer(env node.Env, name string) {
	if name == timerTick {
		s.tickFired(env)
	} else {
		s.catchUp(env)
	}
	switch name {
	case timerRetry:
		if len(s.app.Pending) > 0 {
			s.propose(s.app.Pending[0])
		}
	case timerWrite:
		s.writerCall(env)
	}
	s.settle(env)
}

// writerCall makes the writer's next call: a Put of the node's own key,
// then Options.Client.ReadsPerWrite Gets of the other nodes' keys in
// turn.
func (s *store) writerCall(env node.Env) {
	n := uint64(s.opts.Client.ReadsPerWrite) + 1
	i := s.app.Seq % n
	if i == 0 || s.opts.Nodes < 2 {
		s.call(env, Proposal{Key: fmt.Sprintf("k%d", s.self), Value: fmt.Sprintf("v%d.%d", s.self, s.app.Seq+1)})
		return
	}
	// reads is how many Gets the writer has made before this one: the
	// reads go round the other nodes, one further on each time.
	reads := (s.app.Seq/n)*(n-1) + i - 1
	peer := (s.self-1+reads%uint64(s.opts.Nodes-1)+1)%uint64(s.opts.Nodes) + 1
	s.get(env, Get{Key: fmt.Sprintf("k%d", peer)})
}

// get starts a Get: answered at once from the applied map (ReadsLocal)
// or through raft.
func (s *store) get(env node.Env, c Get) {
	if s.opts.Client.Reads == ReadsLocal {
		node.Invoke(env, c)
		node.Respond(env, c, Value{Value: s.app.KV[c.Key]})
		return
	}
	s.call(env, Proposal{Key: c.Key, Read: true})
}

// HandleApp implements replayed.Object: Put proposes a write, Get a read
// (Options.Client.Reads says how it is answered).
func (s *store) HandleApp(env node.Env, call node.Message) {
	s.catchUp(env)
	switch c := call.(type) {
	case Put:
		s.call(env, Proposal{Key: c.Key, Value: c.Value})
	case Get:
		s.get(env, c)
		if s.opts.Client.Reads == ReadsLocal {
			return
		}
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
	s.catchUp(env)
	s.rn.ReportUnreachable(uint64(peer))
	s.settle(env)
}

// propose hands p to raft: a write or a read through the log as an
// entry, a ReadIndex read as a read request whose context names it.
// Without a leader raft drops either, and the retry timer proposes it
// again.
func (s *store) propose(p Proposal) {
	if p.Read && s.opts.Client.Reads == ReadIndex {
		if s.app.ReadAt == 0 {
			s.rn.ReadIndex(p.readContext())
		}
		return
	}
	_ = s.rn.Propose(p.encode()) // ErrProposalDropped: retried
}

// settle handles raft's Ready until there is none, then sets the timers:
// the raft clock's next tick that matters (rearm), and a node with calls
// it has not completed retries the first of them.
func (s *store) settle(env node.Env) {
	s.drain(env)
	if s.driveMembership() {
		s.drain(env)
	}
	s.rearm(env)
	st := s.rn.BasicStatus()
	if st.RaftState != raft.StateCandidate || st.GetTerm() != s.votesTerm {
		s.votes, s.votesTerm = nil, 0
		if st.RaftState == raft.StateCandidate {
			s.votes, s.votesTerm = map[uint64]bool{s.self: true}, st.GetTerm()
		}
	}
	switch {
	case len(s.app.Pending) == 0:
		env.CancelTimer(timerRetry)
		if s.app.Seq > 0 && s.app.Seq < uint64(max(s.opts.Client.Writes, 0)) && s.opts.Client.WriteEvery > 0 && !env.TimerScheduled(timerWrite) {
			env.SetTimer(timerWrite, s.opts.Client.WriteEvery)
		}
	case !env.TimerScheduled(timerRetry):
		env.SetTimer(timerRetry, s.opts.Client.Retry)
	}
}

// drain handles raft's Ready until there is none.
func (s *store) drain(env node.Env) {
	for s.rn.HasReady() {
		s.handleReady(env, s.rn.Ready())
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
