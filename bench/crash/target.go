package main

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/paxos"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// target is what the crash test checks of one service: it reads the
// nodes' states (their /status JSON), judges them and says whether the
// cluster converged. Paxos must keep its promises; RandTree has nothing
// durable and must re-form a tree of every node after every cycle.
type target struct {
	service   string
	nodes     int
	paxos     *paxosJudge
	converged bool
}

func newTarget(service string, nodes int) *target {
	t := &target{service: service, nodes: nodes}
	if service == paxos.Name {
		t.paxos = newPaxosJudge()
	}
	return t
}

// observe judges one round of observations (node → state JSON; nodes not
// answering are absent) and returns a summary and the broken promises.
func (t *target) observe(states map[node.ID]json.RawMessage) (string, []string, error) {
	v := &view{}
	for id, raw := range states {
		var s node.Service
		if t.paxos != nil {
			ps := &paxos.State{}
			if err := json.Unmarshal(raw, ps); err != nil {
				return "", nil, fmt.Errorf("%v's state: %w", id, err)
			}
			s = ps
		} else {
			rs := &randtree.State{}
			if err := json.Unmarshal(raw, rs); err != nil {
				return "", nil, fmt.Errorf("%v's state: %w", id, err)
			}
			s = rs
		}
		v.add(id, s)
	}
	if t.paxos != nil {
		var bad []string
		for _, id := range v.ids {
			bad = append(bad, t.paxos.observe(id, v.states[id].(*paxos.State))...)
		}
		sum := paxos.Summarize(v)
		t.converged = sum.Learned == t.nodes
		return sum.String(), bad, nil
	}
	sum := randtree.Summarize(v)
	t.converged = sum.Joined == t.nodes && sum.Roots == 1 && sum.TreeSize == t.nodes
	return sum.String(), nil, nil
}

// values returns the values Paxos learned during the run.
func (t *target) values() []string {
	if t.paxos == nil {
		return nil
	}
	return slices.Clone(t.paxos.values)
}

// view is a node.View of the states observed in one round.
type view struct {
	ids    []node.ID
	states map[node.ID]node.Service
}

func (v *view) add(id node.ID, s node.Service) {
	if v.states == nil {
		v.states = map[node.ID]node.Service{}
	}
	v.states[id] = s
	v.ids = append(v.ids, id)
	slices.Sort(v.ids)
}

func (v *view) Nodes() []node.ID                    { return v.ids }
func (v *view) Service(id node.ID) node.Service     { return v.states[id] }
func (v *view) TimerScheduled(node.ID, string) bool { return false }
