package consequence

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Partitions (Faults.Partitions). A partition cuts directed links: what a
// node sends over a cut link is lost. It means what the emulator's
// partitions mean (emulation.Emulator.Partition, CutOneWay):
//
//   - when it is put in place, the connections across a link cut both ways
//     break (what is in flight on them is lost both ways, and both ends
//     get a transport error, as the emulator's retransmissions give up);
//     messages in flight over a link cut one way are lost too, and with
//     them the connection (its sender gets a transport error);
//   - while it is in place, every write over a cut link is lost and
//     answered by one transport error (a refused connection, or, over a
//     connection the other end opened, the broken connection: both ends
//     are told), and datagrams over it are lost silently, as are those in
//     flight when it is cut;
//   - a heal removes the cuts; the next send opens a new connection.
//
// Self-sends are never cut, and crashes and restarts leave the cuts in
// place. At most one partition is in place at a time; its heal is due
// Faults.PartitionLength after it began (a timer of the virtual clock's,
// healComponent), or never.

// CutKinds is a set of shapes of partition (Faults.PartitionKinds).
type CutKinds uint8

// The shapes of partition.
const (
	// CutIsolate cuts every link of one node, both ways.
	CutIsolate CutKinds = 1 << iota
	// CutPartial cuts the link between two nodes both ways while both
	// still reach every other node (the partial partition behind
	// well-known etcd outages).
	CutPartial
	// CutOneWay cuts what one node sends to another, not the reverse.
	CutOneWay
	// CutSplit cuts every link between two groups of at least two nodes
	// each, both ways (explored among nodes of IDs 1 to 32, in models of
	// at least four nodes).
	CutSplit
	// CutAll is every shape.
	CutAll = CutIsolate | CutPartial | CutOneWay | CutSplit
)

var cutNames = []struct {
	k    CutKinds
	name string
}{{CutIsolate, "isolate"}, {CutPartial, "partial"}, {CutOneWay, "one-way"}, {CutSplit, "split"}}

// String returns the shapes' names joined by commas ("isolate,partial"),
// "all" for CutAll, "none" for none.
func (k CutKinds) String() string {
	switch k {
	case 0:
		return "none"
	case CutAll:
		return "all"
	}
	var names []string
	for _, c := range cutNames {
		if k&c.k != 0 {
			names = append(names, c.name)
		}
	}
	if rest := k &^ CutAll; rest != 0 {
		names = append(names, fmt.Sprintf("cut-kinds(%#x)", uint8(rest)))
	}
	return strings.Join(names, ",")
}

// ParseCutKinds parses a comma-separated list of shapes — isolate,
// partial, one-way, split — or "all".
func ParseCutKinds(s string) (CutKinds, error) {
	if s == "all" {
		return CutAll, nil
	}
	var k CutKinds
next:
	for _, name := range strings.Split(s, ",") {
		for _, c := range cutNames {
			if c.name == strings.TrimSpace(name) {
				k |= c.k
				continue next
			}
		}
		return 0, fmt.Errorf("%w: unknown partition kind %q (want isolate, partial, one-way, split or all)", ErrInvalidOptions, name)
	}
	return k, nil
}

// kinds returns the shapes f explores.
func (f Faults) cutKinds() CutKinds {
	if f.PartitionKinds == 0 {
		return CutAll
	}
	return f.PartitionKinds
}

// splitMaxID is the largest node ID a split partition names: a split's
// side is a bit set of IDs in ActorAction.Side.
const splitMaxID = 32

// cutString renders a partition action's shape: "isolate n1", "partial
// n1 n2", "one-way n1 -> n2", "split {n1,n2}".
func (a ActorAction) cutString() string {
	switch a.Cut {
	case CutIsolate:
		return fmt.Sprintf("isolate %v", a.Node)
	case CutPartial:
		return fmt.Sprintf("partial %v %v", a.Node, a.Peer)
	case CutOneWay:
		return fmt.Sprintf("one-way %v -> %v", a.Node, a.Peer)
	case CutSplit:
		var ids []string
		for _, id := range sideIDs(a.Side) {
			ids = append(ids, id.String())
		}
		return "split {" + strings.Join(ids, ",") + "}"
	}
	return fmt.Sprintf("cut(%#x)", uint8(a.Cut))
}

// sideIDs returns the IDs of a split's side, ascending.
func sideIDs(side uint32) []node.ID {
	var out []node.ID
	for side != 0 {
		b := bits.TrailingZeros32(side)
		out = append(out, node.ID(b+1))
		side &^= 1 << b
	}
	return out
}

// SideOf returns the ActorAction.Side of a split whose side holds ids, and
// false if one of them is outside 1..32.
func SideOf(ids []node.ID) (uint32, bool) {
	var side uint32
	for _, id := range ids {
		if id == node.None || id > splitMaxID {
			return 0, false
		}
		side |= 1 << (id - 1)
	}
	return side, true
}

// appendPartitions appends the heal of the partition in place, when its
// time has come, or, with none in place and budget left, a partition of
// every shape Faults.PartitionKinds names: isolations in node order, then
// partial cuts and one-way cuts in pair order, then splits by side.
func (m *ActorModel) appendPartitions(out []Action[ActorAction], g *GlobalState) []Action[ActorAction] {
	if x := g.ext; x != nil && x.cut.Kind != 0 {
		if m.healEnabled(g) {
			i, _ := m.index(x.cut.Node)
			out = append(out, Action[ActorAction]{Node: i, Local: true, Fault: true, Act: ActorAction{Kind: ActHeal, Node: x.cut.Node}})
		}
		return out
	}
	if g.ext.count(1) >= int32(min(m.opts.Faults.Partitions, 1<<20)) {
		return out
	}
	kinds, ids := m.opts.Faults.cutKinds(), m.ids
	part := func(i int, a ActorAction) {
		a.Kind = ActPartition
		out = append(out, Action[ActorAction]{Node: i, Local: true, Fault: true, Act: a})
	}
	if kinds&CutIsolate != 0 && len(ids) > 1 {
		for i, id := range ids {
			part(i, ActorAction{Cut: CutIsolate, Node: id})
		}
	}
	if kinds&CutPartial != 0 && len(ids) > 2 {
		for i, a := range ids {
			for _, b := range ids[i+1:] {
				part(i, ActorAction{Cut: CutPartial, Node: a, Peer: b})
			}
		}
	}
	if kinds&CutOneWay != 0 {
		for i, a := range ids {
			for _, b := range ids {
				if a != b {
					part(i, ActorAction{Cut: CutOneWay, Node: a, Peer: b})
				}
			}
		}
	}
	if kinds&CutSplit != 0 && len(ids) >= 4 && ids[len(ids)-1] <= splitMaxID {
		n := len(ids)
		// Sides hold the first node: each split is listed once.
		for mask := uint64(1); mask < 1<<(n-1); mask++ {
			size := 1 + bits.OnesCount64(mask)
			if size < 2 || size > n-2 {
				continue
			}
			side := uint32(1) << (ids[0] - 1)
			for k := 1; k < n; k++ {
				if mask&(1<<(k-1)) != 0 {
					side |= 1 << (ids[k] - 1)
				}
			}
			part(0, ActorAction{Cut: CutSplit, Node: ids[0], Side: side})
		}
	}
	return out
}

// cutLinks returns the directed links partition a cuts among m's nodes,
// sorted, and false if a is not a partition of them.
func (m *ActorModel) cutLinks(a ActorAction) ([]connKey, bool) {
	if _, ok := m.index(a.Node); !ok {
		return nil, false
	}
	var out []connKey
	both := func(x, y node.ID) { out = append(out, connKey{x, y}, connKey{y, x}) }
	switch a.Cut {
	case CutIsolate:
		for _, o := range m.ids {
			if o != a.Node {
				both(a.Node, o)
			}
		}
	case CutPartial, CutOneWay:
		if _, ok := m.index(a.Peer); !ok || a.Peer == a.Node {
			return nil, false
		}
		if a.Cut == CutOneWay {
			out = append(out, connKey{a.Node, a.Peer})
		} else {
			both(a.Node, a.Peer)
		}
	case CutSplit:
		in := func(id node.ID) bool { return id <= splitMaxID && a.Side&(1<<(id-1)) != 0 }
		if !in(a.Node) {
			return nil, false
		}
		for _, x := range m.ids {
			for _, y := range m.ids {
				if in(x) && !in(y) {
					both(x, y)
				}
			}
		}
	default:
		return nil, false
	}
	if len(out) == 0 {
		return nil, false
	}
	slices.SortFunc(out, cmpConn)
	return slices.Compact(out), true
}

// healEnabled reports whether the partition in place in g may heal now:
// it is timed, and its heal is due no later than the earliest timer plus
// the skew bound (as a timer's firing is).
func (m *ActorModel) healEnabled(g *GlobalState) bool {
	x := g.ext
	if x == nil || x.cut.Kind == 0 || x.healAt.IsZero() {
		return false
	}
	if m.opts.AnyOrderTimers {
		return true
	}
	first, _ := m.earliest(g)
	return !x.healAt.After(first.Add(m.clockSkew()))
}

// nextPartition puts partition a in place at the virtual clock's time.
func (m *ActorModel) nextPartition(g *GlobalState, a ActorAction) (*GlobalState, bool) {
	if (g.ext != nil && g.ext.cut.Kind != 0) || g.ext.count(1) >= int32(min(m.opts.Faults.Partitions, 1<<20)) {
		return nil, false
	}
	cuts, ok := m.cutLinks(a)
	if !ok {
		return nil, false
	}
	s := newSucc(g)
	for _, c := range cuts {
		m.cutLink(s, c.lo, c.hi, g.Cut(c.hi, c.lo) || slices.Contains(cuts, connKey{c.hi, c.lo}))
	}
	x := s.lasting()
	x.partitions++
	x.cut = ActorAction{Kind: ActPartition, Cut: a.Cut, Node: a.Node, Peer: a.Peer, Side: a.Side}
	x.cuts = cuts
	if d := m.opts.Faults.PartitionLength; d > 0 {
		x.healAt = g.now().Add(d)
	}
	s.setLasting(x)
	return s.g, true
}

// cutLink cuts what from sends to to (and, with both, the reverse too):
// the connection between them breaks if it is open and anything crosses a
// link cut both ways or is in flight over this one, and across a link cut
// both ways a stale connection's holder is told too; what is left in
// flight from → to (messages of older connections) is lost, answered by a
// transport error; datagrams in flight from → to are lost.
func (m *ActorModel) cutLink(s *succ, from, to node.ID, both bool) {
	c := s.g.channel(from, to)
	msgs := c != nil && slices.ContainsFunc(c.items, func(it inflight) bool { return it.msg != nil })
	if s.g.Connected(from, to) && (both || msgs) {
		s.breakConn(from, to)
	}
	if both && s.g.Stale(from, to) && !s.g.teQueued(to, from) {
		// A stale connection across a link cut both ways is given up too:
		// its holder's retransmissions fail.
		s.appendChan(to, from, inflight{h: teHash})
	}
	if c := s.g.channel(from, to); c != nil && slices.ContainsFunc(c.items, func(it inflight) bool { return it.msg != nil }) {
		kept := slices.DeleteFunc(slices.Clone(c.items), func(it inflight) bool { return it.msg != nil })
		s.setChan(from, to, kept)
		if !s.g.teQueued(to, from) {
			s.appendChan(to, from, lateTE)
		}
	}
	s.setDgrams(from, to, nil)
}

// nextHeal removes the partition in place once its heal is due.
func (m *ActorModel) nextHeal(g *GlobalState) (*GlobalState, bool) {
	if !m.healEnabled(g) {
		return nil, false
	}
	s := newSucc(g)
	x := s.lasting()
	x.cut, x.cuts, x.healAt = ActorAction{}, nil, time.Time{}
	s.setLasting(x)
	return s.g, true
}

// sendLost carries out a write of id to to that a lasting fault loses
// (to is down, or the link is cut), and reports whether it did: the write
// is lost and answered by one transport error, and id's writes to to are
// lost until that error arrives (a refused connection, which id holds
// stale); a connection the cut outlived (to opened it over a link cut one
// way) breaks.
func (m *ActorModel) sendLost(s *succ, id, to node.ID) bool {
	down := s.g.Down(to)
	if !down && !s.g.Cut(id, to) {
		return false
	}
	if !down && s.g.Connected(id, to) {
		s.breakConn(id, to)
		return true
	}
	// A refused connection: the writes until its transport error arrives
	// are lost too, even once the link heals or the node restarts.
	s.markStale(id, to)
	if !s.g.teQueued(to, id) {
		s.appendChan(to, id, lateTE)
	}
	return true
}

// datagramLost reports whether a datagram from id to to is lost to a
// lasting fault (to is down, or the link is cut).
func (g *GlobalState) datagramLost(id, to node.ID) bool {
	return g.Down(to) || g.Cut(id, to)
}
