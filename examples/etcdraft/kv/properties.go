package kv

import (
	"fmt"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/linearizable"
)

// Properties are the properties of the store configured with opts: the
// Raft paper's safety properties (Figure 3) over the nodes a view holds;
// three bounded properties, LeaderWithin (while a quorum of the voters is
// up, a leader that a quorum of them follows within Options.LeaderBound),
// WritesApplied (every write a client was told succeeded applied by a
// quorum of the voters within Options.AppliedBound) and MembersCatchUp
// (while every member is up, every member, learners too, applies each of
// those writes within the same bound: a member the leader stops
// replicating to is a stall the quorum hides), each over the
// configuration the most advanced node up has applied
// (Options.Membership); and Linearizable, the client
// history of Puts and Gets against a map of registers (Model). The
// store's client never stops writing for long, so its liveness is
// stated with bounds: a plain "eventually" would be judged on whatever a
// walk or a run's end finds in flight.
func Properties(opts Options) ([]node.Property, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return []node.Property{
		{Name: "ElectionSafety", Kind: node.Safety, Check: electionSafety},
		{Name: "LogMatching", Kind: node.Safety, Check: logMatching},
		{Name: "LeaderCompleteness", Kind: node.Safety, Check: leaderCompleteness},
		{Name: "StateMachineSafety", Kind: node.Safety, Check: stateMachineSafety},
		node.Within("LeaderWithin", o.LeaderBound(), membersUp(o, false), quorumLeader(o)),
		node.Within("WritesApplied", o.AppliedBound(), membersUp(o, false), writesApplied(o, false)),
		node.Within("MembersCatchUp", o.AppliedBound(), membersUp(o, true), writesApplied(o, true)),
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

// membership is the configuration a view is judged by: the one applied by
// the node up that has applied the most (the latest committed
// configuration a node up knows; the initial one in a cluster that never
// changes).
func membership(o Options, ns []observed) Conf {
	var best *Observation
	for _, n := range ns {
		if best == nil || n.o.App.RaftApplied > best.App.RaftApplied {
			best = n.o
		}
	}
	if best == nil || best.App.Conf == nil {
		return initialConf(o)
	}
	return *best.App.Conf
}

// counted are the IDs a quorum or a count is taken over: the voters of
// the view's configuration, or every member (learners too) with all.
func counted(o Options, ns []observed, all bool) []uint64 {
	c := membership(o, ns)
	if !all {
		return c.Voters
	}
	return append(slices.Clone(c.Voters), c.Learners...)
}

// need is how many of ids a property needs: a majority, or all of them.
func need(ids []uint64, all bool) int {
	if all {
		return len(ids)
	}
	return len(ids)/2 + 1
}

// writesApplied is the goal of WritesApplied (a quorum of the voters) and
// of MembersCatchUp (all: every member): every write a node up has
// completed (its own, the last of which its Last records) is applied by
// that many members up, itself included if it is one. A write its node
// completed and a quorum never applies was lost: acknowledged and not
// committed (an application that applies before commit), or committed
// and overwritten.
func writesApplied(o Options, all bool) func(node.View) error {
	return func(v node.View) error {
		ns := observe(v)
		ids := counted(o, ns, all)
		want := need(ids, all)
		for _, a := range ns {
			done := a.o.App.Last[uint64(a.id)]
			if done == 0 {
				continue
			}
			have := 0
			for _, b := range ns {
				if slices.Contains(ids, uint64(b.id)) && b.o.App.Last[uint64(a.id)] >= done {
					have++
				}
			}
			if have < want {
				return fmt.Errorf("%v's write %d is applied by %d members, not %d", a.id, done, have, want)
			}
		}
		return nil
	}
}

// membersUp is the precondition of the bounded properties: a quorum of
// the voters up (all: every member). A view says which nodes are up, not
// which can reach each other: a partition that leaves no quorum
// connected opens the obligation too.
func membersUp(o Options, all bool) func(node.View) bool {
	return func(v node.View) bool {
		ns := observe(v)
		ids := counted(o, ns, all)
		up := 0
		for _, n := range ns {
			if slices.Contains(ids, uint64(n.id)) {
				up++
			}
		}
		return up >= need(ids, all)
	}
}

// quorumLeader is LeaderWithin's goal: a leader that a quorum of the
// voters up (itself included) follow in its term. A leader cut off from
// the others may still say it leads (until CheckQuorum steps it down) and
// a node cut off from the leader may campaign in ever higher terms
// (without PreVote): neither is a leader the cluster has, and neither
// hides one.
func quorumLeader(o Options) func(node.View) error {
	return func(v node.View) error {
		ns := observe(v)
		voters := counted(o, ns, false)
		var leaders int
		for _, l := range ns {
			if l.o.State != "StateLeader" {
				continue
			}
			leaders++
			if followers(ns, voters, uint64(l.id), l.o.Term) >= need(voters, false) {
				return nil
			}
		}
		if leaders == 0 {
			return fmt.Errorf("no leader")
		}
		return fmt.Errorf("no leader that %d voters follow", need(voters, false))
	}
}

// followers counts the voters up in term that follow leader, itself
// included.
func followers(ns []observed, voters []uint64, leader, term uint64) int {
	n := 0
	for _, f := range ns {
		if slices.Contains(voters, uint64(f.id)) && f.o.Term == term && (uint64(f.id) == leader || f.o.Lead == leader) {
			n++
		}
	}
	return n
}
