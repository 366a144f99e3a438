package kv

import (
	"slices"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Conf is a cluster configuration: its voters and learners, by ID in
// increasing order.
type Conf struct {
	Voters, Learners []uint64
}

// initialConf is the configuration the cluster starts with: voters
// 1..Options.initialVoters().
func initialConf(o Options) Conf {
	c := Conf{Voters: make([]uint64, o.initialVoters())}
	for i := range c.Voters {
		c.Voters[i] = uint64(i + 1)
	}
	return c
}

// confOf is raft's ConfState as a Conf. A joint configuration never
// arises: the store proposes single changes only.
func confOf(cs *raftpb.ConfState) Conf {
	c := Conf{Voters: slices.Clone(cs.GetVoters()), Learners: slices.Clone(cs.GetLearners())}
	slices.Sort(c.Voters)
	slices.Sort(c.Learners)
	return c
}

// confState is c as raft's ConfState.
func (c Conf) confState() *raftpb.ConfState {
	return &raftpb.ConfState{Voters: slices.Clone(c.Voters), Learners: slices.Clone(c.Learners)}
}

// equal reports whether c and d are the same configuration.
func (c Conf) equal(d Conf) bool {
	return slices.Equal(c.Voters, d.Voters) && slices.Equal(c.Learners, d.Learners)
}

// conf is the configuration the application has applied.
func (a *app) conf(o Options) Conf {
	if a.Conf != nil {
		return *a.Conf
	}
	return initialConf(o)
}

// setConf records c as the applied configuration: nil while it is the
// initial one, so that a cluster that never changes observes what it did
// before membership changes existed.
func (a *app) setConf(o Options, c Conf) {
	if c.equal(initialConf(o)) {
		a.Conf = nil
		return
	}
	a.Conf = &c
}

// applyConfChange hands raft a committed conf-change entry (every one,
// whatever the planted bug: raft requires it), records the configuration
// it makes and reports whether e was one.
func (s *store) applyConfChange(e *raftpb.Entry) (bool, error) {
	var cc raftpb.ConfChangeI
	switch e.GetType() {
	case raftpb.EntryConfChange:
		var v1 raftpb.ConfChange
		if err := proto.Unmarshal(e.GetData(), &v1); err != nil {
			return false, err
		}
		cc = &v1
	case raftpb.EntryConfChangeV2:
		var v2 raftpb.ConfChangeV2
		if err := proto.Unmarshal(e.GetData(), &v2); err != nil {
			return false, err
		}
		cc = &v2
	default:
		return false, nil
	}
	s.app.setConf(s.opts, confOf(s.rn.ApplyConfChange(cc)))
	return true, nil
}

// driveMembership proposes the next membership change (see
// MembershipOptions) if this node leads, has applied JoinAt entries and
// has no conf change pending, and reports whether it proposed one.
func (s *store) driveMembership() bool {
	m := s.opts.Membership
	if m.Joiners == 0 || s.app.RaftApplied < m.JoinAt {
		return false
	}
	st := s.rn.Status()
	if st.RaftState != raft.StateLeader || internals.read(s.rn).PendingConfIndex > s.app.RaftApplied {
		return false
	}
	conf := s.app.conf(s.opts)
	for j := uint64(s.opts.initialVoters() + 1); j <= uint64(s.opts.Nodes); j++ {
		if slices.Contains(conf.Voters, j) {
			continue
		}
		t := raftpb.ConfChangeType_ConfChangeAddLearnerNode
		if slices.Contains(conf.Learners, j) {
			if pr, ok := st.Progress[j]; !ok || pr.Match < st.GetCommit() {
				return false // the learner is still catching up
			}
			t = raftpb.ConfChangeType_ConfChangeAddNode
		}
		cc := &raftpb.ConfChangeV2{Changes: []*raftpb.ConfChangeSingle{{Type: t.Enum(), NodeId: proto.Uint64(j)}}}
		return s.rn.ProposeConfChange(cc) == nil
	}
	return false
}
