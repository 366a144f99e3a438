package steering

import (
	"errors"
	"regexp"
	"slices"
	"strconv"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// A liveness verdict is only as good as the snapshot it was reached on. A
// neighbourhood snapshot holds some nodes; the others still act in the
// deployment, and the model cannot know what they will do. A dead end in
// which a member waits on such a node — a lock server whose holder is a
// client outside the snapshot, a joining node whose answer comes from a
// bootstrap the gather did not reach — is not a prediction: the round
// counts it open (LivenessOutcome.Open) and searches on. The issue-29
// measurement that made this a rule: the zoo's corrected lock server got
// 44–58 "dead ends" a run ("n3 still waits for the lock") from client
// snapshots that held the server but not the client holding the lock.
//
// A dead end is closed when no node involved in it deals with a node
// outside the snapshot. The involved nodes are those the failing
// property's error blames (Blamer, else the node names in its text, see
// NamedNodes; every member if it names none), closed under "is a peer
// of" among the members: a node's peers are those it exchanged messages
// with recently (snapshot.NodeCheckpoint.Peers, recorded by the gather)
// and those its service names (node.Neighborer), in the dead end's state.
// An involved node with a peer that is not a member makes the dead end
// open; so does one that sends to a node outside the snapshot in
// LivenessWalks.K walks from the dead end. Snapshots that record no
// peers (offline models, a peer that predates the field) are judged by
// their sends alone.

// Blamer is an optional method of a property's error: the nodes the
// violation is about. The liveness search takes them as the nodes
// involved in a dead end; an error without it is read for node names
// (NamedNodes).
type Blamer interface {
	Blamed() []node.ID
}

var nodeToken = regexp.MustCompile(`\bn([0-9]+)\b`)

// NamedNodes returns the node IDs a property's error (or any explanation)
// names, as node.ID's String writes them: "n9: n13 is both a child and a
// sibling" names n9 and n13. Properties that name the nodes they blame
// (or whose errors implement Blamer) let the liveness search tell a dead
// end of the neighbourhood from one that waits on nodes outside it.
func NamedNodes(s string) []node.ID {
	var out []node.ID
	for _, m := range nodeToken.FindAllStringSubmatch(s, -1) {
		if v, err := strconv.ParseUint(m[1], 10, 32); err == nil {
			out = append(out, node.ID(v))
		}
	}
	return out
}

// blamed returns the nodes verr is about: its Blamer's, else those its
// text names.
func blamed(verr error) []node.ID {
	var b Blamer
	if errors.As(verr, &b) {
		return b.Blamed()
	}
	return NamedNodes(verr.Error())
}

// recordedPeers maps each member of snap to the peers its checkpoint
// recorded (nil when snap is nil).
func recordedPeers(snap *snapshot.Snapshot) map[node.ID][]node.ID {
	if snap == nil {
		return nil
	}
	out := make(map[node.ID][]node.ID, len(snap.Nodes))
	for _, n := range snap.Nodes {
		out[n.Node] = n.Peers
	}
	return out
}

// peersOf returns node id's peers in state g: the recorded ones and those
// its service names.
func (ls *livenessSearch) peersOf(g *consequence.GlobalState, id node.ID) []node.ID {
	ps := ls.peers[id]
	if nb, ok := g.Service(id).(node.Neighborer); ok {
		ps = append(slices.Clone(ps), nb.Neighbors(id)...)
	}
	return ps
}

// involved returns the nodes of the dead end g whose property error is
// verr (see the comment at the top of this file), and whether one of them
// has a peer outside the snapshot.
func (ls *livenessSearch) involved(g *consequence.GlobalState, verr error) ([]node.ID, bool) {
	members := g.Nodes()
	in := blamedMembers(verr, members)
	if len(in) == 0 {
		in = slices.Clone(members)
	}
	for i := 0; i < len(in); i++ {
		var outside bool
		if in, outside = ls.addPeersOf(g, in, i, members); outside {
			return in, true
		}
	}
	return in, false
}

// blamedMembers returns the members verr blames (blamed), each once, in
// the order it names them (nil without an error).
func blamedMembers(verr error, members []node.ID) []node.ID {
	if verr == nil {
		return nil
	}
	var in []node.ID
	for _, id := range blamed(verr) {
		if slices.Contains(members, id) && !slices.Contains(in, id) {
			in = append(in, id)
		}
	}
	return in
}

// addPeersOf adds to the involved nodes in the peers of in[i] in g that
// are members, and reports whether in[i] has a peer that is not one.
func (ls *livenessSearch) addPeersOf(g *consequence.GlobalState, in []node.ID, i int, members []node.ID) ([]node.ID, bool) {
	for _, p := range ls.peersOf(g, in[i]) {
		switch {
		case p == node.None || p == in[i]:
		case !slices.Contains(members, p):
			return in, true
		case !slices.Contains(in, p):
			in = append(in, p)
		}
	}
	return in, false
}

// closed reports whether the dead end g, where a liveness property fails
// with verr, is the neighbourhood's own (see the comment at the top of
// this file).
func (ls *livenessSearch) closed(g *consequence.GlobalState, verr error) (bool, error) {
	in, outside := ls.involved(g, verr)
	if outside {
		return false, nil
	}
	open := false
	m := ls.m.WithOutside(func(from, to node.ID, _ node.Message) {
		open = open || slices.Contains(in, from)
	})
	bm := ls.budget.model(m)
	opts := ls.opts
	opts.Walks = 1
	for w := 0; w < ls.c.cfg.K && !open; w++ {
		opts.Seed = ls.opts.Seed ^ (uint64(w)+1)*0xd1b54a32d192ed03
		if _, err := consequence.RandomWalksFrom(ls.budget.ctx, bm, ls.props, []consequence.PathState[*consequence.GlobalState, consequence.ActorAction]{{Start: g, State: g}}, opts); err != nil {
			return false, err
		}
	}
	return !open, nil
}
