package emulation

import (
	"errors"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
)

// Scripted faults. Experiments that lead a run into a known bad scenario
// (the CrystalBall paper's Figure 13 breaks the communication between one
// node and the others, then drops one Learn message) need faults at chosen
// moments, not random ones. They are scenario methods like Reset and
// BreakConnection: they act at the current virtual time, so a script
// places them with RunUntil, and a run stays a pure function of its seed
// and its script.
//
//   - Partition(a, b) cuts the link between a and b in both directions
//     until Heal(a, b): the connections between them break (whatever is in
//     flight on them is lost, and each end that holds one gets a transport
//     error one RTT later, when its retransmissions give up), and while the
//     link is cut no connection can be opened across it: a send is lost
//     and its sender gets a transport error one RTT later, as for a refused
//     connection (one per connection attempt). Isolate and Reconnect cut
//     and heal every link of one node. Self-sends are never cut; a node's
//     resets and restarts do not heal its cuts.
//   - DropNext(from, to, type) discards the next service message (or
//     datagram) of that type from one node to another when it arrives: the
//     network delivered it (FIFO order, the node's snapshot manager and the
//     connection are unaffected), but the node's handler never sees it, as
//     if the packet had been lost above the transport. It is counted in
//     Result.Messages.Dropped (Datagrams.Dropped for a datagram; without a
//     transport error) and traced as "drop message T from nX (fault)"
//     ("drop datagram ...").
//   - A partition loses the datagrams sent across the cut link, and those
//     in flight on it when it is cut, silently.
//   - CutOneWay(a, b) cuts only what a sends to b: a's sends to b are lost
//     as across a partition (a new connection is refused; a write over
//     the connection b opened breaks it, as does a message in flight on
//     one when it arrives, and a is told), and so are a's datagrams to b,
//     while b's messages reach a over connections b opens. HealOneWay removes it. PartitionGroups cuts
//     every link between nodes of different groups (nodes in no group
//     stay connected to all), and HealAll heals every cut.
//
// Trace lines: "nA partition nB", "nA heal nB", "nA cut nB" (one way),
// "nA heal-cut nB".
//
// Submit is the scripted application call that goes through the node's
// runtime like a workload call (AppCall runs the handler at once): it is
// queued now, and steering's filters and immediate safety check see it.

// pair is an unordered pair of node IDs, lower first.
type pair [2]node.ID

func pairOf(a, b node.ID) pair {
	if b < a {
		a, b = b, a
	}
	return pair{a, b}
}

// faultState is the emulator's record of scripted faults. Its map is only
// looked up, never iterated, so it cannot leak an order into the run.
type faultState struct {
	cuts   map[pair]struct{}
	oneway map[[2]node.ID]struct{} // (from, to): what from sends to is lost (CutOneWay)
	drops  []dropRule              // in the order DropNext registered them
}

// dropRule is a pending DropNext.
type dropRule struct {
	from, to node.ID
	typ      string
}

// cut reports whether what a sends to b is lost to a cut: the link
// between them is cut (Partition), or a's side of it (CutOneWay).
func (f *faultState) cut(a, b node.ID) bool {
	if len(f.oneway) > 0 {
		if _, ok := f.oneway[[2]node.ID{a, b}]; ok {
			return true
		}
	}
	return f.pairCut(a, b)
}

// pairCut reports whether the link between a and b is cut both ways.
func (f *faultState) pairCut(a, b node.ID) bool {
	if len(f.cuts) == 0 || a == b {
		return false
	}
	_, ok := f.cuts[pairOf(a, b)]
	return ok
}

// takeDrop reports whether a DropNext rule matches msg from→to, and
// consumes it if so (the earliest registered rule first).
func (f *faultState) takeDrop(from, to node.ID, msg node.Message) bool {
	if len(f.drops) == 0 || msg == nil {
		return false
	}
	for i, r := range f.drops {
		if r.from == from && r.to == to && r.typ == msg.MessageType() {
			f.drops = append(f.drops[:i], f.drops[i+1:]...)
			return true
		}
	}
	return false
}

// checkPair validates the two ends of a link.
func (e *Emulator) checkPair(op string, a, b node.ID) error {
	if e.err != nil {
		return e.err
	}
	switch {
	case e.node(a) == nil:
		return fmt.Errorf("emulation: %s: no node %v", op, a)
	case e.node(b) == nil:
		return fmt.Errorf("emulation: %s: no node %v", op, b)
	case a == b:
		return fmt.Errorf("emulation: %s: %v cannot be cut from itself", op, a)
	}
	return nil
}

// Partition cuts the link between nodes a and b now, in both directions,
// until Heal: the connections between them break (messages in flight on
// them are lost; each end holding one gets a transport error one RTT
// later), and sends across the link are lost, each connection attempt
// answered by a transport error after one RTT. Either node may be down.
// Cutting a link that is already cut does nothing.
func (e *Emulator) Partition(a, b node.ID) error {
	if err := e.checkPair("Partition", a, b); err != nil {
		return err
	}
	if e.faults.pairCut(a, b) {
		return nil
	}
	if e.faults.cuts == nil {
		e.faults.cuts = map[pair]struct{}{}
	}
	e.faults.cuts[pairOf(a, b)] = struct{}{}
	if e.cfg.Trace != nil {
		e.traceLabel(a, "partition "+b.String())
	}
	e.cutConn(e.nodes[a], b)
	e.cutConn(e.nodes[b], a)
	return e.err
}

// cutConn breaks n's connection to peer, if it holds one, for a partition:
// everything in flight on it is lost, and n (if it still holds the
// connection's incarnation) gets a transport error one RTT later.
func (e *Emulator) cutConn(n *emNode, peer node.ID) {
	p := n.peers[peer]
	if p == nil || p.conn == nil {
		return
	}
	c := p.conn
	c.broken = true
	if n.live && n.inc == c.incOf(n.id) && !c.doomed(n.id) {
		e.doom(c, n, e.now+e.rtt(n.id, peer))
	}
}

// Heal restores the link between a and b cut by Partition (or Isolate).
// Nothing is resent: the next send across it opens a new connection.
// Healing a link that is not cut does nothing.
func (e *Emulator) Heal(a, b node.ID) error {
	if err := e.checkPair("Heal", a, b); err != nil {
		return err
	}
	if !e.faults.pairCut(a, b) {
		return nil
	}
	delete(e.faults.cuts, pairOf(a, b))
	if e.cfg.Trace != nil {
		e.traceLabel(a, "heal "+b.String())
	}
	return e.err
}

// Partitioned reports whether the link between a and b is cut (both
// ways: Partition).
func (e *Emulator) Partitioned(a, b node.ID) bool { return e.faults.pairCut(a, b) }

// CutFrom reports whether what a sends to b is lost to a cut (Partition
// or CutOneWay).
func (e *Emulator) CutFrom(a, b node.ID) bool { return e.faults.cut(a, b) }

// Isolate cuts every link of node id (Partition with each other node, in
// ascending order): the communication between id and the others is broken.
func (e *Emulator) Isolate(id node.ID) error {
	if e.node(id) == nil {
		return fmt.Errorf("emulation: Isolate: no node %v", id)
	}
	for i := 1; i < len(e.nodes); i++ {
		if other := node.ID(i); other != id {
			if err := e.Partition(id, other); err != nil {
				return err
			}
		}
	}
	return e.err
}

// Reconnect heals every cut link of node id (in ascending order of the
// other end).
func (e *Emulator) Reconnect(id node.ID) error {
	if e.node(id) == nil {
		return fmt.Errorf("emulation: Reconnect: no node %v", id)
	}
	for i := 1; i < len(e.nodes); i++ {
		if other := node.ID(i); other != id {
			if err := e.Heal(id, other); err != nil {
				return err
			}
		}
	}
	return e.err
}

// DropNext makes the next service message (or datagram) of type msgType
// (its MessageType) from node from to node to vanish on arrival: the transport
// delivers it — FIFO order, the connection and the receiver's snapshot
// manager are unaffected — but to's handler never sees it. Rules are
// consumed by the first matching arrival, in the order they were
// registered; a message that is lost anyway (a reset, a broken connection)
// does not consume one. Snapshot protocol messages never match.
func (e *Emulator) DropNext(from, to node.ID, msgType string) error {
	if e.err != nil {
		return e.err
	}
	switch {
	case e.node(from) == nil:
		return fmt.Errorf("emulation: DropNext: no node %v", from)
	case e.node(to) == nil:
		return fmt.Errorf("emulation: DropNext: no node %v", to)
	case msgType == "":
		return errors.New("emulation: DropNext: empty message type")
	}
	e.faults.drops = append(e.faults.drops, dropRule{from: from, to: to, typ: msgType})
	return nil
}

// PendingDrops returns the number of DropNext rules not consumed yet.
func (e *Emulator) PendingDrops() int { return len(e.faults.drops) }

// dropFault discards an arriving service message (or datagram) that a
// DropNext rule matches, and reports whether it did.
func (e *Emulator) dropFault(n *emNode, from node.ID, msg node.Message, datagram bool) bool {
	if !e.faults.takeDrop(from, n.id, msg) {
		return false
	}
	what := "message"
	if datagram {
		e.st.dgDropped++
		what = "datagram"
	} else {
		e.st.dropped++
	}
	e.st.count(kindDrop)
	e.traceDrop(n.id, what, msg, from, "fault")
	return true
}

// faultLayer is the DropNext rules of one node as a layer.Layer, in its
// pipeline after the snapshot layer and before steering: a message a rule
// matches has reached the node (its snapshot layer saw it, checkpointing
// first if its number is larger) but is kept from steering and the
// handler. It has no messages, ticks or sends of its own.
type faultLayer struct {
	e *Emulator
	n *emNode
}

func (faultLayer) Messages() []node.Message                { return nil }
func (faultLayer) Attach(layer.Host) error                 { return nil }
func (faultLayer) Start(time.Time) []node.Envelope         { return nil }
func (faultLayer) Sending(time.Time, *node.Envelope)       {}
func (faultLayer) After(time.Time) []node.Envelope         { return nil }
func (faultLayer) Tick(time.Time) ([]node.Envelope, error) { return nil, nil }
func (faultLayer) NextTick() time.Time                     { return time.Time{} }

// Before keeps from the layers after it a message a DropNext rule
// matches (dropFault counts and traces it).
func (f faultLayer) Before(_ time.Time, ev node.Event, in *node.Envelope) (bool, []node.Envelope, error) {
	if ev.Kind != node.EventMessage {
		return true, nil, nil
	}
	return !f.e.dropFault(f.n, ev.From, ev.Msg, in != nil && in.Datagram), nil, nil
}

// Submit queues the application call msg for live node id, due now: it is
// handled like a workload call, after the events already due at this
// instant, through steering's filters and the immediate safety check (which
// may postpone it), and is dropped if the node resets or goes down first.
// AppCall, by contrast, runs the handler at once and bypasses steering.
func (e *Emulator) Submit(id node.ID, msg node.Message) error {
	n, err := e.liveNode("Submit", id)
	if err != nil {
		return err
	}
	if msg == nil {
		return errors.New("emulation: Submit: nil message")
	}
	if err := e.checkCall(n, msg); err != nil {
		return err
	}
	it := e.q.alloc()
	it.kind, it.at, it.node, it.inc, it.msg = itemApp, e.now, n.id, n.inc, msg
	e.q.push(it)
	return nil
}
