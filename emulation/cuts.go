package emulation

import (
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// Partitions beyond one pair (faults.go has Partition, Heal, Isolate and
// Reconnect): a link cut one way, groups cut from each other, every cut
// healed, and the partitions the nemesis puts in place and heals
// (NemesisConfig.Partitions, Schedule).

// CutOneWay cuts what from sends to to, now, until HealOneWay or HealAll:
// from's sends to to are lost as across a partition — a new connection is
// refused and from gets a transport error one RTT later; a write over a
// connection to opened breaks it, both ends told (one direction alone
// cannot carry a connection), and so does a message already in flight
// when it arrives — and so are its datagrams, while what to sends reaches
// from over connections to opens. Cutting what is cut already does
// nothing.
func (e *Emulator) CutOneWay(from, to node.ID) error {
	if err := e.checkPair("CutOneWay", from, to); err != nil {
		return err
	}
	k := [2]node.ID{from, to}
	if _, ok := e.faults.oneway[k]; ok {
		return nil
	}
	if e.faults.oneway == nil {
		e.faults.oneway = map[[2]node.ID]struct{}{}
	}
	e.faults.oneway[k] = struct{}{}
	if e.cfg.Trace != nil {
		e.traceLabel(from, "cut "+to.String())
	}
	return e.err
}

// HealOneWay removes CutOneWay(from, to); healing what is not cut does
// nothing.
func (e *Emulator) HealOneWay(from, to node.ID) error {
	if err := e.checkPair("HealOneWay", from, to); err != nil {
		return err
	}
	k := [2]node.ID{from, to}
	if _, ok := e.faults.oneway[k]; !ok {
		return nil
	}
	delete(e.faults.oneway, k)
	if e.cfg.Trace != nil {
		e.traceLabel(from, "heal-cut "+to.String())
	}
	return e.err
}

// HealAll heals every cut link, both ways and one way, in ascending order
// of their ends.
func (e *Emulator) HealAll() error {
	for _, p := range slices.SortedFunc(maps.Keys(e.faults.cuts), cmpPairs) {
		if err := e.Heal(p[0], p[1]); err != nil {
			return err
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(e.faults.oneway), cmpPairs) {
		if err := e.HealOneWay(k[0], k[1]); err != nil {
			return err
		}
	}
	return e.err
}

func cmpPairs[P ~[2]node.ID](a, b P) int {
	if a[0] != b[0] {
		if a[0] < b[0] {
			return -1
		}
		return 1
	}
	switch {
	case a[1] < b[1]:
		return -1
	case a[1] > b[1]:
		return 1
	}
	return 0
}

// PartitionGroups cuts every link between nodes of different groups, both
// ways (Partition, in ascending order of the pairs); nodes in no group
// stay connected to every node. A node may be in one group only.
func (e *Emulator) PartitionGroups(groups ...[]node.ID) error {
	_, err := e.partitionGroups(groups)
	return err
}

// groupLinks returns the pairs PartitionGroups cuts, ascending.
func (e *Emulator) groupLinks(groups [][]node.ID) ([]cutLink, error) {
	side := map[node.ID]int{}
	for g, ids := range groups {
		for _, id := range ids {
			if e.node(id) == nil {
				return nil, fmt.Errorf("emulation: PartitionGroups: no node %v", id)
			}
			if _, ok := side[id]; ok {
				return nil, fmt.Errorf("emulation: PartitionGroups: %v is in two groups", id)
			}
			side[id] = g
		}
	}
	var out []cutLink
	for _, a := range slices.Sorted(maps.Keys(side)) {
		for _, b := range slices.Sorted(maps.Keys(side)) {
			if a < b && side[a] != side[b] {
				out = append(out, cutLink{a: a, b: b})
			}
		}
	}
	return out, nil
}

// partitionGroups is PartitionGroups, returning the links it cut that were
// not cut before.
func (e *Emulator) partitionGroups(groups [][]node.ID) ([]cutLink, error) {
	if e.err != nil {
		return nil, e.err
	}
	links, err := e.groupLinks(groups)
	if err != nil {
		return nil, err
	}
	return e.cutLinks(links)
}

// cutLinks cuts links, returning those that were not cut before.
func (e *Emulator) cutLinks(links []cutLink) ([]cutLink, error) {
	var cut []cutLink
	for _, l := range links {
		var err error
		switch {
		case l.oneWay && !e.faults.cut(l.a, l.b):
			err = e.CutOneWay(l.a, l.b)
		case !l.oneWay && !e.faults.pairCut(l.a, l.b):
			err = e.Partition(l.a, l.b)
		default:
			continue
		}
		if err != nil {
			return cut, err
		}
		cut = append(cut, l)
	}
	return cut, e.err
}

// partitionRecord records links a nemesis partition of shape kind cut,
// for length (zero: for good), and queues its heal: it counts the
// partition, tells the layers (observeLasting) and returns the record's
// index (-1 when nothing was cut).
func (e *Emulator) partitionRecord(links []cutLink, kind consequence.CutKinds, length time.Duration) int {
	nm := e.nemesisState()
	if len(links) == 0 {
		nm.st.Skipped++
		return -1
	}
	nm.st.Partitions++
	e.observeLasting(consequence.ActPartition, kind, length)
	rec := len(nm.heals)
	nm.heals = append(nm.heals, links)
	if length > 0 {
		e.queueNemesis(e.now+length, nemHeal, uint64(rec), node.None, 0)
	}
	return rec
}

// healRecord heals the links of partition record rec still cut.
func (e *Emulator) healRecord(rec int) {
	nm := e.nemesisState()
	if rec < 0 || rec >= len(nm.heals) || nm.heals[rec] == nil {
		return
	}
	for _, l := range nm.heals[rec] {
		if l.oneWay {
			_ = e.HealOneWay(l.a, l.b) // the ends exist: they were cut
		} else {
			_ = e.Heal(l.a, l.b)
		}
	}
	nm.heals[rec] = nil
	nm.st.Heals++
	if nm.partIn == rec {
		nm.partIn = -1
	}
}

// randomPartition puts a partition of a random shape in place for an
// exponential length (NemesisConfig.Partitions), unless the process's
// last one is still in place. Draw order: the shape's kind, its nodes,
// the length.
func (e *Emulator) randomPartition() bool {
	nm := e.nemesis()
	if nm.partIn >= 0 {
		nm.st.Skipped++
		return false
	}
	c := e.cfg.Nemesis.Partitions
	kinds := c.Kinds
	if kinds == 0 {
		kinds = consequence.CutAll
	}
	var choice []consequence.CutKinds
	for k := kinds; k != 0; k &= k - 1 {
		choice = append(choice, consequence.CutKinds(1)<<bits.TrailingZeros8(uint8(k)))
	}
	kind := choice[nm.part.IntN(len(choice))]
	links := e.randomShape(kind)
	var length time.Duration
	if c.Length > 0 {
		length = max(time.Duration(nm.part.ExpFloat64()*float64(c.Length)), time.Nanosecond)
	}
	if links == nil {
		nm.st.Skipped++
		return false
	}
	cut, err := e.cutLinks(links)
	if err != nil && err != e.err {
		panic(fmt.Sprintf("emulation: a random partition: %v", err))
	}
	nm.partIn = e.partitionRecord(cut, kind, length)
	return nm.partIn >= 0
}

// randomShape draws the links of a partition of shape kind over nodes
// 1..Nodes (nil when the nodes are too few for it).
func (e *Emulator) randomShape(kind consequence.CutKinds) []cutLink {
	r, n := e.nem.part, e.cfg.Nodes
	if n < 2 {
		return nil
	}
	pair := func() (node.ID, node.ID) {
		a := node.ID(1 + r.IntN(n))
		b := node.ID(1 + r.IntN(n-1))
		if b >= a {
			b++
		}
		return a, b
	}
	var out []cutLink
	switch kind {
	case consequence.CutIsolate:
		a := node.ID(1 + r.IntN(n))
		for b := node.ID(1); b <= node.ID(n); b++ {
			if b != a {
				out = append(out, cutLink{a: min(a, b), b: max(a, b)})
			}
		}
	case consequence.CutPartial:
		a, b := pair()
		out = append(out, cutLink{a: min(a, b), b: max(a, b)})
	case consequence.CutOneWay:
		a, b := pair()
		out = append(out, cutLink{a: a, b: b, oneWay: true})
	case consequence.CutSplit:
		if n < 4 {
			return nil
		}
		for range 64 {
			var groups [2][]node.ID
			for id := node.ID(1); id <= node.ID(n); id++ {
				g := r.IntN(2)
				groups[g] = append(groups[g], id)
			}
			if len(groups[0]) >= 2 && len(groups[1]) >= 2 {
				links, _ := e.groupLinks(groups[:])
				return links
			}
		}
		return nil
	}
	return out
}

// cutWrite carries out a write of from over connection c to dst across a
// link cut one way (CutOneWay; a link cut both ways broke its
// connections already): one direction alone cannot carry a connection,
// so the write breaks it — lost, both ends told as BreakConnection tells
// them — and dst's messages on it are lost too.
func (e *Emulator) cutWrite(from *emNode, c *conn, dst *emNode, env *node.Envelope, id uint64) {
	c.broken = true
	if !c.doomed(from.id) {
		e.doom(c, from, e.now+e.rtt(from.id, dst.id))
	}
	if p := dst.peers[from.id]; p != nil && p.conn == c && dst.inc == c.incOf(dst.id) && !c.doomed(dst.id) {
		e.doom(c, dst, e.now+e.topo.Link(from.id, dst.id).Latency)
	}
	e.st.dropped++
	e.observeNet(NetDrop, id, from.id, dst.id, env.CN, env.Msg)
}
