package kv

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/vmihailenco/msgpack/v5"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// imageTag starts an image (a durable encoding starts with a msgpack
// map header instead).
const imageTag = 'I'

// image is a follower written whole: its durable state and the volatile
// state of a follower that decides what it does — the leader it follows,
// its raft clock and its election counter.
type image struct {
	Durable         []byte
	Lead            uint64
	Clock           raftClock
	ElectionElapsed int
}

// AppendImage implements replayed.Rebaser: a follower writes an image
// of itself; a candidate (its vote tally) and a leader (its followers'
// progress) cannot be rebuilt through raft's API, and write none; nor
// does a follower whose log keeps entries before its snapshot.
func (s *store) AppendImage(dst []byte) ([]byte, bool) {
	st := s.rn.BasicStatus()
	if st.RaftState != raft.StateFollower || s.rn.HasReady() {
		return dst, false
	}
	if snap, err := s.storage.Snapshot(); err != nil || s.retainsBefore(snap.GetMetadata().GetIndex()) {
		return dst, false // the durable state drops those entries; the image would differ
	}
	im := image{Durable: s.AppendDurable(nil), Lead: st.Lead, Clock: s.clock, ElectionElapsed: internals.read(s.rn).ElectionElapsed}
	b, err := node.AppendCanonical(append(dst, imageTag), im)
	if err != nil {
		return dst, false
	}
	return b, true
}

// retainsBefore reports whether the log holds entries up to index i (a
// compaction kept them before the snapshot at i).
func (s *store) retainsBefore(i uint64) bool {
	first, err := s.storage.FirstIndex()
	return err == nil && first <= i
}

// decodeImage decodes an image (untrusted, like durable bytes).
func decodeImage(b []byte) (*image, error) {
	if err := node.CheckMsgpack(b, node.MaxMsgpackDepth); err != nil {
		return nil, fmt.Errorf("etcdkv: image: %w", err)
	}
	var im image
	if err := msgpack.Unmarshal(b, &im); err != nil {
		return nil, fmt.Errorf("etcdkv: image: %w", err)
	}
	return &im, nil
}

// restoreImage makes a store built from an image's durable state the
// image's follower again: it follows the image's leader, and its raft
// clock and election counter are the image's.
func (s *store) restoreImage(im *image) error {
	if err := s.follow(im.Lead); err != nil {
		return err
	}
	e := s.opts.Raft.ElectionTick
	if c := im.Clock; c.Timeout < 0 || c.Timeout >= 2*e || c.Armed < 0 || c.Armed > 2*e {
		return fmt.Errorf("etcdkv: image: raft clock %+v out of range for ElectionTick %d", c, e)
	}
	s.clock = im.Clock
	if s.clock.Timeout > 0 {
		internals.setRandomizedElectionTimeout(s.rn, s.clock.Timeout)
	}
	if im.ElectionElapsed < 0 || im.ElectionElapsed > 2*e {
		return fmt.Errorf("etcdkv: image: election counter %d out of range", im.ElectionElapsed)
	}
	internals.setElectionElapsed(s.rn, im.ElectionElapsed)
	return nil
}

// follow makes a store restarted from an image's durable state follow
// the image's leader again: it steps the heartbeat a leader sends, its
// answer discarded (it was sent when the image's follower got one).
func (s *store) follow(lead uint64) error {
	if lead == 0 {
		return nil
	}
	hs := s.rn.BasicStatus()
	err := s.rn.Step(&raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), From: proto.Uint64(lead), To: proto.Uint64(s.self),
		Term: proto.Uint64(hs.GetTerm()), Commit: proto.Uint64(hs.GetCommit())})
	if err != nil {
		return fmt.Errorf("etcdkv: image: following %d: %w", lead, err)
	}
	for s.rn.HasReady() {
		rd := s.rn.Ready()
		if len(rd.Entries) > 0 || len(rd.CommittedEntries) > 0 || !raft.IsEmptySnap(rd.Snapshot) || !raft.IsEmptyHardState(rd.HardState) {
			return fmt.Errorf("etcdkv: image: the restarted follower has work to do")
		}
		s.rn.Advance(rd)
	}
	return nil
}
