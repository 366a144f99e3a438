package kv

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/linearizable"
)

// Properties are the properties of the store configured with opts: the
// Raft paper's safety properties (Figure 3) over the nodes a view holds;
// two bounded properties, LeaderWithin (while a quorum of members is up,
// a leader that a quorum follows within Options.LeaderBound) and
// WritesApplied (every write a client was told succeeded applied by a
// quorum within Options.AppliedBound) and MembersCatchUp (while every
// member is up, every member applies each of those writes within the
// same bound: a member the leader stops replicating to is a stall the
// quorum hides); and Linearizable, the client
// history of Puts and Gets against a map of registers (Model). The
// store's client never stops writing for long, so its liveness is
// stated with bounds: a plain "eventually" would be judged on whatever a
// walk or a run's end finds in flight.
func Properties(opts Options) ([]node.Property, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	quorum := o.Nodes/2 + 1
	return []node.Property{
		{Name: "ElectionSafety", Kind: node.Safety, Check: electionSafety},
		{Name: "LogMatching", Kind: node.Safety, Check: logMatching},
		{Name: "LeaderCompleteness", Kind: node.Safety, Check: leaderCompleteness},
		{Name: "StateMachineSafety", Kind: node.Safety, Check: stateMachineSafety},
		node.Within("LeaderWithin", o.LeaderBound(), quorumUp(quorum), quorumLeader(quorum)),
		node.Within("WritesApplied", o.AppliedBound(), quorumUp(quorum), writesApplied(quorum)),
		node.Within("MembersCatchUp", o.AppliedBound(), quorumUp(o.Nodes), writesApplied(o.Nodes)),
		linearizable.Property("Linearizable", Model()),
	}, nil
}

// observed is a view's nodes with their observations, in ID order.
type observed struct {
	id node.ID
	o  *Observation
}

func observe(v node.View) []observed {
	ids := v.Nodes()
	out := make([]observed, 0, len(ids))
	for _, id := range ids {
		if o, ok := observedRef(v, id); ok {
			out = append(out, observed{id, o})
		}
	}
	return out
}

// electionSafety: at most one leader is elected in a term (every node
// remembers the terms it led).
func electionSafety(v node.View) error {
	led := map[uint64]node.ID{}
	for _, n := range observe(v) {
		for _, t := range n.o.App.LedTerms {
			if other, ok := led[t]; ok && other != n.id {
				return fmt.Errorf("%v and %v were both leaders in term %d", other, n.id, t)
			}
			led[t] = n.id
		}
	}
	return nil
}

// entryAt returns the entry at index i of o's log, if o's log holds it.
func (o *Observation) entryAt(i uint64) (Entry, bool) {
	if i <= o.SnapIndex || i > o.SnapIndex+uint64(len(o.Log)) {
		return Entry{}, false
	}
	return o.Log[i-o.SnapIndex-1], true
}

// lastIndex is the index of o's last entry.
func (o *Observation) lastIndex() uint64 { return o.SnapIndex + uint64(len(o.Log)) }

// logMatching: if two logs hold an entry with the same index and term,
// they hold the same entries up to it.
func logMatching(v node.View) error {
	ns := observe(v)
	for i, a := range ns {
		for _, b := range ns[i+1:] {
			if err := matchLogs(a, b); err != nil {
				return err
			}
		}
	}
	return nil
}

func matchLogs(a, b observed) error {
	top := min(a.o.lastIndex(), b.o.lastIndex())
	for k := top; k > max(a.o.SnapIndex, b.o.SnapIndex); k-- {
		ea, _ := a.o.entryAt(k)
		eb, _ := b.o.entryAt(k)
		if ea.Term != eb.Term {
			continue
		}
		for j := k; j > max(a.o.SnapIndex, b.o.SnapIndex); j-- {
			ea, _ := a.o.entryAt(j)
			eb, _ := b.o.entryAt(j)
			if ea != eb {
				return fmt.Errorf("%v and %v agree on entry %d (term %d) but not on entry %d", a.id, b.id, k, ea.Term, j)
			}
		}
		return nil
	}
	return nil
}

// leaderCompleteness: an entry committed in a term is in the log of
// every leader of a later term.
func leaderCompleteness(v node.View) error {
	ns := observe(v)
	for _, l := range ns {
		if l.o.State != "StateLeader" {
			continue
		}
		for _, n := range ns {
			for i := n.o.SnapIndex + 1; i <= n.o.Commit; i++ {
				e, ok := n.o.entryAt(i)
				if !ok || e.Term >= l.o.Term || i <= l.o.SnapIndex {
					continue
				}
				if le, ok := l.o.entryAt(i); !ok || le != e {
					return fmt.Errorf("entry %d (term %d) is committed at %v but not in the log of %v, leader of term %d", i, e.Term, n.id, l.id, l.o.Term)
				}
			}
		}
	}
	return nil
}

// stateMachineSafety: no two applications (of one node or two) applied
// different entries at the same index.
func stateMachineSafety(v node.View) error {
	type first struct {
		id   node.ID
		term uint64
	}
	seen := map[uint64]first{}
	for _, n := range observe(v) {
		for _, e := range n.o.App.Applied {
			if f, ok := seen[e.Index]; ok && f.term != e.Term {
				return fmt.Errorf("%v applied entry %d of term %d, %v that of term %d", f.id, e.Index, f.term, n.id, e.Term)
			}
			seen[e.Index] = first{n.id, e.Term}
		}
	}
	return nil
}

// writesApplied is WritesApplied's goal: every write a node up has
// completed (its own, the last of which its Last records) is applied by
// quorum nodes up, itself included. A write its node completed and a
// quorum never applies was lost: acknowledged and not committed (an
// application that applies before commit), or committed and overwritten.
func writesApplied(quorum int) func(node.View) error {
	return func(v node.View) error {
		ns := observe(v)
		for _, a := range ns {
			done := a.o.App.Last[uint64(a.id)]
			if done == 0 {
				continue
			}
			have := 0
			for _, b := range ns {
				if b.o.App.Last[uint64(a.id)] >= done {
					have++
				}
			}
			if have < quorum {
				return fmt.Errorf("%v's write %d is applied by %d nodes, not a quorum of %d", a.id, done, have, quorum)
			}
		}
		return nil
	}
}

// quorumUp is LeaderWithin's precondition: at least quorum members are up.
// A view says which nodes are up, not which can reach each other: a
// partition that leaves no quorum connected opens the obligation too.
func quorumUp(quorum int) func(node.View) bool {
	return func(v node.View) bool {
		up := 0
		for _, id := range v.Nodes() {
			if _, ok := observedRef(v, id); ok {
				up++
			}
		}
		return up >= quorum
	}
}

// quorumLeader is LeaderWithin's goal: a leader that quorum nodes up
// (itself included) follow in its term. A leader cut off from the others
// may still say it leads (until CheckQuorum steps it down) and a node cut
// off from the leader may campaign in ever higher terms (without
// PreVote): neither is a leader the cluster has, and neither hides one.
func quorumLeader(quorum int) func(node.View) error {
	return func(v node.View) error {
		var leaders int
		for _, id := range v.Nodes() {
			l, ok := observedRef(v, id)
			if !ok || l.State != "StateLeader" {
				continue
			}
			leaders++
			if followers(v, uint64(id), l.Term) >= quorum {
				return nil
			}
		}
		if leaders == 0 {
			return fmt.Errorf("no leader")
		}
		return fmt.Errorf("no leader that %d nodes follow", quorum)
	}
}

// followers counts the nodes up in term that follow leader, itself
// included.
func followers(v node.View, leader, term uint64) int {
	n := 0
	for _, id := range v.Nodes() {
		if o, ok := observedRef(v, id); ok && o.Term == term && (uint64(id) == leader || o.Lead == leader) {
			n++
		}
	}
	return n
}
