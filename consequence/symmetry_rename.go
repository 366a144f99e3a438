package consequence

import (
	"fmt"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Renaming a global state's nodes for symmetry reduction. Nothing here
// builds a renamed GlobalState: the fingerprint of the renamed state is
// computed component by component, as GlobalState.fingerprint computes a
// real state's, with every node ID x replaced by rename(x) — in positions,
// inside node states and messages (node.RenamingService,
// node.RenamingMessage), in connections, and in the order of the datagram
// multisets, which are sorted by the renamed messages' hashes.

// renamedFingerprint returns the fingerprint of g with its nodes renamed.
// Nodes with group[i] != 0 are hashed without their random source. With the
// identity and no groups it equals g's own fingerprint (a test keeps it so).
func (m *ActorModel) renamedFingerprint(g *GlobalState, rename func(node.ID) node.ID, group []int) node.Hash {
	var fp node.Hash
	for i, n := range g.nodes {
		fp = xorHash(fp, mix(tagNode, uint64(rename(m.ids[i])), 0, m.renamedNodeHash(n, rename, group != nil && group[i] != 0)))
	}
	for _, c := range g.chans {
		items := m.renamedItems(c.items, rename)
		fp = xorHash(fp, mix(tagChan, uint64(rename(c.from)), uint64(rename(c.to)), hashList(tagChan, node.Hash{}, items)))
	}
	for _, d := range g.dgrams {
		items := m.renamedItems(d.items, rename)
		slices.SortStableFunc(items, func(a, b inflight) int { return cmpHash(a.h, b.h) })
		fp = xorHash(fp, mix(tagDgram, uint64(rename(d.from)), uint64(rename(d.to)), hashList(tagDgram, node.Hash{}, items)))
	}
	fp = xorHash(fp, connsComponent(renamedPairs(g.conns, rename, true)))
	fp = xorHash(fp, staleComponent(renamedPairs(g.stale, rename, false)))
	if !m.opts.AnyOrderTimers && g.hasFirst {
		for i, n := range g.nodes {
			fp = xorHash(fp, timersComponent(rename(m.ids[i]), n, g.first))
		}
	}
	return xorHash(fp, faultsComponent(g.resets, g.breaks, g.drops, int(g.refusals)))
}

// renamedPairs renames connection pairs and sorts them; unordered pairs
// (connections) are put back in lo < hi form, ordered ones (stale: holder,
// peer) keep their order.
func renamedPairs(pairs []connKey, rename func(node.ID) node.ID, unordered bool) []connKey {
	if len(pairs) == 0 {
		return nil
	}
	out := make([]connKey, len(pairs))
	for k, p := range pairs {
		out[k] = connKey{lo: rename(p.lo), hi: rename(p.hi)}
		if unordered {
			out[k] = ordered(out[k].lo, out[k].hi)
		}
	}
	slices.SortFunc(out, cmpConn)
	return out
}

// renamedNodeHash is hashNode of n with its service state and pending calls
// renamed, and, with noRand, its random source left out (zeroed).
func (m *ActorModel) renamedNodeHash(n *actorNode, rename func(node.ID) node.ID, noRand bool) node.Hash {
	st := n.st
	if rs, ok := st.Service.(node.RenamingService); ok {
		st.Service = rs.RenameIDs(rename)
	}
	if noRand {
		st.Rand = node.Rand{}
	}
	h, err := st.Hash()
	if err != nil {
		// The state hashed when it was built; a renamed copy that does not
		// is the service's RenameIDs bug, a panic per the Model contract.
		panic(fmt.Errorf("consequence: symmetry: hashing a renamed node state: %w", err))
	}
	if len(n.pending) > 0 {
		h = hashList(tagPending, h, m.renamedItems(n.pending, rename))
	}
	return h
}

// renamedItems returns a copy of items with their messages renamed and
// rehashed (transport errors, and messages that hold no IDs — not
// node.RenamingMessage — keep their hash).
func (m *ActorModel) renamedItems(items []inflight, rename func(node.ID) node.ID) []inflight {
	out := slices.Clone(items)
	for k := range out {
		rm, ok := out[k].msg.(node.RenamingMessage)
		if !ok {
			continue
		}
		msg := rm.RenameIDs(rename)
		h, err := m.msgHash(msg)
		if err != nil {
			panic(fmt.Errorf("consequence: symmetry: hashing a renamed %s: %w", msg.MessageType(), err))
		}
		out[k].msg, out[k].h = msg, h
	}
	return out
}

// signature describes node index i of g up to renaming the groups (ph maps
// every member of group k to placeholder(k)): its state, pending calls and
// timers, and the channels, datagrams, connections and stale connections it
// is an end of, each with the other end's placeholder. Members of one orbit
// position get equal signatures; the sort in canonicalRename orders by it.
func (m *ActorModel) signature(g *GlobalState, i int, ph func(node.ID) node.ID) node.Hash {
	id := m.ids[i]
	n := g.nodes[i]
	h := mix(tagNode, 0, 0, m.renamedNodeHash(n, ph, true))
	if !m.opts.AnyOrderTimers && g.hasFirst {
		h = addHash(h, timersComponent(0, n, g.first))
	}
	end := func(from, to node.ID) (uint64, uint64, bool) {
		// The side i is on (1 sender, 2 receiver, 3 both) and the other end.
		switch {
		case from == id && to == id:
			return 3, 0, true
		case from == id:
			return 1, uint64(ph(to)), true
		case to == id:
			return 2, uint64(ph(from)), true
		}
		return 0, 0, false
	}
	for _, c := range g.chans {
		if side, other, ok := end(c.from, c.to); ok {
			h = addHash(h, mix(tagChan, side, other, hashList(tagChan, node.Hash{}, m.renamedItems(c.items, ph))))
		}
	}
	for _, d := range g.dgrams {
		if side, other, ok := end(d.from, d.to); ok {
			items := m.renamedItems(d.items, ph)
			slices.SortStableFunc(items, func(a, b inflight) int { return cmpHash(a.h, b.h) })
			h = addHash(h, mix(tagDgram, side, other, hashList(tagDgram, node.Hash{}, items)))
		}
	}
	for _, k := range g.conns {
		if _, other, ok := end(k.lo, k.hi); ok {
			// Connections are unordered: which end is lo depends on the IDs.
			h = addHash(h, mix(tagConns, 0, other, node.Hash{}))
		}
	}
	for _, k := range g.stale {
		if side, other, ok := end(k.lo, k.hi); ok {
			h = addHash(h, mix(tagStale, side, other, node.Hash{}))
		}
	}
	return h
}

// addHash combines multiset members: unlike XOR, two equal members (two
// channels to members of one group, renamed alike) do not cancel out.
func addHash(a, b node.Hash) node.Hash { return node.Hash{Hi: a.Hi + b.Hi, Lo: a.Lo + b.Lo} }
