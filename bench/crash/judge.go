package main

import (
	"fmt"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/paxos"
)

// paxosJudge checks what Paxos promises across crashes, from every state
// the crash test observes (a node's /status, at any moment, across its
// incarnations):
//
//   - the learned value never changes: every node that learned a value
//     learned the first value any node learned, and keeps it;
//   - no acceptor breaks a promise: its promised ballot never goes back,
//     and it never accepts a new proposal below a ballot it was seen to
//     have promised; its accepted ballot never goes back either (it would
//     have forgotten an acceptance).
//
// It is pure (a function of the observations in order) and not safe for
// concurrent use.
type paxosJudge struct {
	chosen   string
	promised map[node.ID]paxos.Ballot
	accepted map[node.ID]paxos.Ballot
	learned  map[node.ID]bool
	// values are the distinct learned values seen, in order.
	values []string
}

func newPaxosJudge() *paxosJudge {
	return &paxosJudge{promised: map[node.ID]paxos.Ballot{}, accepted: map[node.ID]paxos.Ballot{}, learned: map[node.ID]bool{}}
}

// observe takes node id's state as seen now and returns the promises it
// shows broken (nil when none).
func (j *paxosJudge) observe(id node.ID, s *paxos.State) []string {
	var bad []string
	if s.Learned != "" {
		if !slices.Contains(j.values, s.Learned) {
			j.values = append(j.values, s.Learned)
		}
		if j.chosen == "" {
			j.chosen = s.Learned
		} else if s.Learned != j.chosen {
			bad = append(bad, fmt.Sprintf("%v learned %q, but %q was learned before", id, s.Learned, j.chosen))
		}
		j.learned[id] = true
	} else if j.learned[id] {
		bad = append(bad, fmt.Sprintf("%v forgot the value it learned (%q)", id, j.chosen))
	}
	if p := j.promised[id]; s.Promised.Less(p) {
		bad = append(bad, fmt.Sprintf("%v's promise went back from %v to %v", id, p, s.Promised))
	}
	if a := j.accepted[id]; s.Accepted.Less(a) {
		bad = append(bad, fmt.Sprintf("%v's accepted ballot went back from %v to %v", id, a, s.Accepted))
	} else if s.Accepted != a && s.Accepted.Less(j.promised[id]) {
		bad = append(bad, fmt.Sprintf("%v accepted %v after promising %v", id, s.Accepted, j.promised[id]))
	}
	if j.promised[id].Less(s.Promised) {
		j.promised[id] = s.Promised
	}
	if j.accepted[id].Less(s.Accepted) {
		j.accepted[id] = s.Accepted
	}
	return bad
}
