package consequence

import (
	"fmt"
	"slices"
	"time"

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
//
// known, if not nil, holds by node index the hash of a member's node without
// its random source where no renaming of the groups changes the node (it
// holds no member's ID; see signatures), zero elsewhere: those are reused.
func (m *ActorModel) renamedFingerprint(g *GlobalState, rename func(node.ID) node.ID, group []int, known []node.Hash) node.Hash {
	var fp node.Hash
	for i, n := range g.nodes {
		h := node.Hash{}
		if known != nil {
			h = known[i]
		}
		if h == (node.Hash{}) {
			h, _ = m.renamedNodeHash(n, rename, group != nil && group[i] != 0)
		}
		fp = xorHash(fp, mix(tagNode, uint64(rename(m.ids[i])), 0, h))
	}
	for _, c := range g.chans {
		items, _ := m.renamedItems(c.items, rename)
		fp = xorHash(fp, mix(tagChan, uint64(rename(c.from)), uint64(rename(c.to)), hashList(tagChan, node.Hash{}, items)))
	}
	for _, d := range g.dgrams {
		items, changed := m.renamedItems(d.items, rename)
		if changed {
			slices.SortStableFunc(items, func(a, b inflight) int { return cmpHash(a.h, b.h) })
		}
		fp = xorHash(fp, mix(tagDgram, uint64(rename(d.from)), uint64(rename(d.to)), hashList(tagDgram, node.Hash{}, items)))
	}
	fp = xorHash(fp, connsComponent(renamedPairs(g.conns, rename, true)))
	fp = xorHash(fp, staleComponent(renamedPairs(g.stale, rename, false)))
	if ref, ok := m.clockRef(g); ok {
		for i, n := range g.nodes {
			fp = xorHash(fp, timersComponent(rename(m.ids[i]), n, ref))
		}
	}
	fp = xorHash(fp, spentComponent(g.spent))
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
// renamed, and, with noRand, its random source left out (zeroed). It also
// reports whether the renaming changed the state or a pending call.
func (m *ActorModel) renamedNodeHash(n *actorNode, rename func(node.ID) node.ID, noRand bool) (node.Hash, bool) {
	st := n.st
	changed := false
	if rs, ok := st.Service.(node.RenamingService); ok {
		st.Service, changed = rs.RenameIDs(rename)
	}
	if !changed && !noRand {
		// n.hash covers the same state and the pending calls, which may
		// still need renaming.
		if items, renamed := m.renamedItems(n.pending, rename); renamed {
			h, _ := n.st.Hash() // hashed without error when n was built
			return hashList(tagPending, h, items), true
		}
		return n.hash, false
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
		items, renamed := m.renamedItems(n.pending, rename)
		h = hashList(tagPending, h, items)
		changed = changed || renamed
	}
	return h, changed
}

// renamedItems returns items with their messages renamed and rehashed, and
// whether any changed (transport errors, messages that hold no IDs — not
// node.RenamingMessage — and messages RenameIDs leaves unchanged keep their
// hash). items itself is returned, not copied, when none changed.
func (m *ActorModel) renamedItems(items []inflight, rename func(node.ID) node.ID) ([]inflight, bool) {
	out, copied := items, false
	for k := range items {
		rm, ok := items[k].msg.(node.RenamingMessage)
		if !ok {
			continue
		}
		msg, changed := rm.RenameIDs(rename)
		if !changed {
			continue
		}
		h, err := m.msgHash(msg)
		if err != nil {
			panic(fmt.Errorf("consequence: symmetry: hashing a renamed %s: %w", msg.MessageType(), err))
		}
		if !copied {
			out, copied = slices.Clone(items), true
		}
		out[k].msg, out[k].h = msg, h
	}
	return out, copied
}

// signatures describes every group member of g up to renaming the groups
// (ph maps every member of group k to placeholder(k)), by node index (zero
// outside the groups): its state, pending calls and timers, and the
// channels, datagrams, connections and stale connections it is an end of,
// each with its side and the other end's placeholder. Members in the same
// position of one orbit get equal signatures; canonicalRename sorts by
// them. Each channel is renamed and hashed once, whatever its ends. The
// second result is renamedFingerprint's known: the node hashes no renaming
// of the groups changes, since renaming to placeholders did not.
func (m *ActorModel) signatures(g *GlobalState, group []int, ph func(node.ID) node.ID) (sigs, known []node.Hash) {
	sigs, known = make([]node.Hash, len(m.ids)), make([]node.Hash, len(m.ids))
	for i, n := range g.nodes {
		if group[i] == 0 {
			continue
		}
		h, changed := m.renamedNodeHash(n, ph, true)
		if !changed {
			known[i] = h
		}
		sigs[i] = mix(tagNode, 0, 0, h)
		if ref, ok := m.clockRef(g); ok {
			sigs[i] = addHash(sigs[i], timersComponent(0, n, ref))
		}
	}
	// add adds a component about the pair from → to to the signatures of
	// its ends that are members: side 1 for the sender, 2 the receiver, 3
	// both (a node's channel to itself); unordered pairs use side 0.
	add := func(tag uint64, from, to node.ID, unordered bool, h func() node.Hash) {
		fi, fin := m.index(from)
		ti, tin := m.index(to)
		fm, tm := fin && group[fi] != 0, tin && group[ti] != 0
		if !fm && !tm {
			return
		}
		c := h()
		side := func(s uint64) uint64 {
			if unordered {
				return 0
			}
			return s
		}
		switch {
		case from == to:
			sigs[fi] = addHash(sigs[fi], mix(tag, side(3), 0, c))
			return
		case fm:
			sigs[fi] = addHash(sigs[fi], mix(tag, side(1), uint64(ph(to)), c))
		}
		if tm {
			sigs[ti] = addHash(sigs[ti], mix(tag, side(2), uint64(ph(from)), c))
		}
	}
	for _, c := range g.chans {
		add(tagChan, c.from, c.to, false, func() node.Hash {
			items, _ := m.renamedItems(c.items, ph)
			return hashList(tagChan, node.Hash{}, items)
		})
	}
	for _, d := range g.dgrams {
		add(tagDgram, d.from, d.to, false, func() node.Hash {
			items, changed := m.renamedItems(d.items, ph)
			if changed {
				slices.SortStableFunc(items, func(a, b inflight) int { return cmpHash(a.h, b.h) })
			}
			return hashList(tagDgram, node.Hash{}, items)
		})
	}
	none := func() node.Hash { return node.Hash{} }
	for _, k := range g.conns {
		add(tagConns, k.lo, k.hi, true, none) // lo and hi depend on the IDs
	}
	for _, k := range g.stale {
		add(tagStale, k.lo, k.hi, false, none)
	}
	return sigs, known
}

// clockRef returns the time clockHash measures g's timers and node clocks
// from, and false when the clock is off (AnyOrderTimers).
func (m *ActorModel) clockRef(g *GlobalState) (time.Time, bool) {
	switch {
	case m.opts.AnyOrderTimers:
		return time.Time{}, false
	case g.hasFirst:
		return g.first, true
	}
	return g.now(), true
}

// addHash combines multiset members: unlike XOR, two equal members (two
// channels to members of one group, renamed alike) do not cancel out.
func addHash(a, b node.Hash) node.Hash { return node.Hash{Hi: a.Hi + b.Hi, Lo: a.Lo + b.Lo} }
