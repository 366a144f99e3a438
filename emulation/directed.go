package emulation

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
)

// Directed runs: a path the explorer found, carried out by the emulator.
//
// A path of the actor model (a check report's, a steering prediction's)
// claims that these events, in this order, lead the system to a
// violation. The model is the emulator's world written down; it can be
// wrong about it (a partial view, a fault the deployment does not have,
// an order the network does not allow). ReplayPath tests the claim on the
// emulated system: every action is carried out by the emulator's own
// connections, timers, incarnations and fault injectors as the next
// event, and meanwhile nothing happens that would step a service handler.
// The events a path passes over are held back, as an asynchronous
// network and slow nodes may hold them; virtual time advances to each
// forced event's due time (a timer's deadline, a message's arrival).

// ErrDiverged is wrapped by ReplayPath's error when the emulated system
// cannot take a step of the path: the message it delivers is not the
// oldest in flight on its connection, the timer it fires is not set, the
// node it steps is down, or the action is a fault the emulator does not
// inject on demand. The error names the step and the reason.
var ErrDiverged = errors.New("emulation: the path diverged from the emulated system")

// ReplayPath carries out path on the emulated system as a directed run
// (see above) and returns how many of its actions it carried out. Every
// node that has not started yet starts first, as the explorer's start
// state has every node started. faults are the explorer's fault options
// the path was found with (the size of a clock jump; zero:
// consequence.DefaultClockJump). A path from the explorer's start state
// wants an emulator whose nodes start together (Config.StartSpread of a
// nanosecond): a node's first messages to a peer that has not started
// yet are refused, which the start state does not know. The safety properties are checked after
// every event as in any run, so Result reports a violation the path
// reaches; a liveness claim is judged by running on (RunUntil) and
// reading Result.Liveness.
//
// A step the system cannot take ends the replay with an error wrapping
// ErrDiverged, the system left as it was before that step; a handler's
// panic or a failed run ends it with Err's error. The emulator carries
// on afterwards as after any events of its own (Step, RunUntil).
//
// Actions the emulator cannot force are reported as divergence: a send
// refusal (it refuses a send only when a send queue is full) and a
// duplicate (it copies only messages it decided to copy at the send).
// A late message (consequence.ActDelay) needs nothing: a directed run
// holds back every event it does not force.
func (e *Emulator) ReplayPath(path []consequence.ActorAction, faults consequence.Faults) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	e.startAll()
	for i, a := range path {
		err := e.force(a, faults)
		if e.err != nil {
			return i, e.err
		}
		if err != nil {
			return i, fmt.Errorf("%w: step %d (%v): %w", ErrDiverged, i+1, a, err)
		}
	}
	return len(path), nil
}

// startAll starts every node that has not started yet.
func (e *Emulator) startAll() {
	for e.err == nil {
		i := e.q.find(func(it *item) bool { return it.kind == itemStart })
		if i < 0 {
			return
		}
		e.processTaken(e.q.remove(i))
	}
}

// processTaken carries out an item taken out of the queue out of turn,
// at its due time if that is later than now.
func (e *Emulator) processTaken(it *item) {
	if it.at > e.now {
		e.now = it.at
	}
	e.process(it)
	e.q.release(it)
}

// force carries out one action of a path as the next event.
func (e *Emulator) force(a consequence.ActorAction, faults consequence.Faults) error {
	switch a.Kind {
	case consequence.ActDeliver:
		if a.Msg == nil {
			return e.forceTransportError(a)
		}
		return e.forceDelivery(a, 0)
	case consequence.ActDeliverAhead:
		return e.forceDelivery(a, int(a.Pos))
	case consequence.ActTimer:
		return e.forceTimer(a)
	case consequence.ActApp:
		return e.forceApp(a)
	case consequence.ActDeliverDatagram, consequence.ActDropDatagram:
		return e.forceDatagram(a)
	case consequence.ActLose:
		return e.forceLoss(a)
	case consequence.ActDelay:
		return nil
	case consequence.ActRefuse:
		return errors.New("the emulator refuses a send only when the send queue is full")
	case consequence.ActDuplicate:
		return errors.New("the emulator duplicates only the messages it chose to copy at the send")
	}
	return e.forceFault(a, faults)
}

// forceFault injects a fault action through the emulator's own API.
func (e *Emulator) forceFault(a consequence.ActorAction, faults consequence.Faults) error {
	switch a.Kind {
	case consequence.ActReset:
		return e.Reset(a.Node, a.Silent)
	case consequence.ActBreak:
		return e.BreakConnection(a.Node, a.Peer)
	case consequence.ActCrash:
		return e.Crash(a.Node, 0) // the path restarts it (ActRestart)
	case consequence.ActRestart:
		return e.Up(a.Node)
	case consequence.ActHeal:
		return e.HealAll()
	case consequence.ActClockJump:
		d := faults.ClockJump
		if d == 0 {
			d = consequence.DefaultClockJump
		}
		if a.Back {
			d = -d
		}
		return e.JumpClock(a.Node, d)
	case consequence.ActPartition:
		return e.forcePartition(a)
	}
	return fmt.Errorf("action kind %d is not one the emulator carries out", a.Kind)
}

// forcePartition puts the partition a describes in place.
func (e *Emulator) forcePartition(a consequence.ActorAction) error {
	switch a.Cut {
	case consequence.CutIsolate:
		return e.Isolate(a.Node)
	case consequence.CutPartial:
		return e.Partition(a.Node, a.Peer)
	case consequence.CutOneWay:
		return e.CutOneWay(a.Node, a.Peer)
	case consequence.CutSplit:
		var side, rest []node.ID
		for _, n := range e.nodes {
			if n.id >= 1 && n.id <= 32 && a.Side&(1<<(n.id-1)) != 0 {
				side = append(side, n.id)
			} else {
				rest = append(rest, n.id)
			}
		}
		return e.PartitionGroups(side, rest)
	}
	return fmt.Errorf("partition shape %d is not one the emulator puts in place", a.Cut)
}

// forceDelivery delivers the message a names, the one at position pos of
// its connection's messages (0: the oldest). Items of the connection
// that step no handler of the service — the layers' protocol messages,
// messages the network drops, arrivals at a downlink — go first, as the
// network would carry them out.
func (e *Emulator) forceDelivery(a consequence.ActorAction, pos int) error {
	for e.err == nil {
		i := e.q.findNth(onConnection(a), e.serviceDelivery, pos)
		if i < 0 {
			return fmt.Errorf("no message from %v to %v in flight at position %d", a.Peer, a.Node, pos)
		}
		it := e.q.items[i]
		if !e.serviceDelivery(it) {
			e.processTaken(e.q.remove(i))
			continue
		}
		if !e.sameMessage(it.msg, a.Msg) {
			return fmt.Errorf("the message in flight is %s, not %s", msgType(it.msg), msgType(a.Msg))
		}
		e.processTaken(e.q.remove(i))
		return nil
	}
	return e.err
}

// onConnection matches the arrivals of messages (not datagrams) from
// a.Peer to a.Node.
func onConnection(a consequence.ActorAction) func(*item) bool {
	return func(it *item) bool {
		return it.kind == itemDeliver && !it.datagram && it.node == a.Node && it.peer == a.Peer
	}
}

// serviceDelivery reports whether it, a message's arrival, would step the
// receiver's service: an arrival at the receiver (not at its downlink),
// not lost by the network, not a layer's protocol message, and
// deliverable to the receiver's incarnation.
func (e *Emulator) serviceDelivery(it *item) bool {
	return !it.atLink && it.dgDrop != dgLost && !layer.IsMessage(it.msg) && e.deliverable(e.nodes[it.node], it)
}

// forceTransportError delivers the oldest transport error about a.Peer
// queued for a.Node.
func (e *Emulator) forceTransportError(a consequence.ActorAction) error {
	n := e.node(a.Node)
	if n == nil || !n.live {
		return fmt.Errorf("node %v is not up", a.Node)
	}
	i := e.q.find(func(it *item) bool {
		return it.kind == itemTransportError && it.node == a.Node && it.peer == a.Peer && it.inc == n.inc
	})
	if i < 0 {
		return fmt.Errorf("no transport error about %v is on its way to %v", a.Peer, a.Node)
	}
	e.processTaken(e.q.remove(i))
	return nil
}

// forceTimer fires a.Node's timer a.Timer, at its deadline.
func (e *Emulator) forceTimer(a consequence.ActorAction) error {
	n := e.node(a.Node)
	if n == nil || !n.live {
		return fmt.Errorf("node %v is not up", a.Node)
	}
	i := e.q.find(func(it *item) bool {
		return it.kind == itemTimer && it.node == a.Node && it.name == a.Timer && it.inc == n.inc && n.timers[it.name] == it.seq
	})
	if i < 0 {
		return fmt.Errorf("timer %q of %v is not set", a.Timer, a.Node)
	}
	e.processTaken(e.q.remove(i))
	return nil
}

// forceApp runs an application call: the node's oldest queued call (a
// pending one: the workload's), or a call its service declares
// (node.AppCaller), which a client may make at any time.
func (e *Emulator) forceApp(a consequence.ActorAction) error {
	n := e.node(a.Node)
	if n == nil || !n.live {
		return fmt.Errorf("node %v is not up", a.Node)
	}
	if !a.Pending {
		return e.AppCall(a.Node, a.Msg)
	}
	i := e.q.find(func(it *item) bool { return it.kind == itemApp && it.node == a.Node && it.inc == n.inc })
	if i < 0 {
		return fmt.Errorf("no application call is pending at %v", a.Node)
	}
	if it := e.q.items[i]; !e.sameMessage(it.msg, a.Msg) {
		return fmt.Errorf("the pending call is %s, not %s", msgType(it.msg), msgType(a.Msg))
	}
	e.processTaken(e.q.remove(i))
	return nil
}

// forceDatagram delivers (or loses, for ActDropDatagram) a datagram
// equal to a.Msg in flight from a.Peer to a.Node.
func (e *Emulator) forceDatagram(a consequence.ActorAction) error {
	i := e.q.find(func(it *item) bool {
		return it.kind == itemDeliver && it.datagram && !it.atLink && it.node == a.Node && it.peer == a.Peer && e.sameMessage(it.msg, a.Msg)
	})
	if i < 0 {
		return fmt.Errorf("no datagram %s from %v to %v in flight", msgType(a.Msg), a.Peer, a.Node)
	}
	it := e.q.remove(i)
	if a.Kind == consequence.ActDropDatagram {
		e.st.dropped++
		e.st.count(kindDrop)
		e.q.release(it)
		return nil
	}
	e.processTaken(it)
	return nil
}

// forceLoss loses the message at position a.Pos of the connection from
// a.Peer to a.Node (a message its service declares lossy).
func (e *Emulator) forceLoss(a consequence.ActorAction) error {
	i := e.q.findNth(onConnection(a), e.serviceDelivery, int(a.Pos))
	if i < 0 || !e.serviceDelivery(e.q.items[i]) || !e.sameMessage(e.q.items[i].msg, a.Msg) {
		return fmt.Errorf("no message %s from %v to %v in flight at position %d", msgType(a.Msg), a.Peer, a.Node, a.Pos)
	}
	it := e.q.remove(i)
	e.st.dropped++
	e.st.count(kindDrop)
	e.q.release(it)
	return nil
}

// sameMessage reports whether two messages are the same value: the same
// type and the same canonical encoding (a message decoded from a report
// is equal to the one sent, not identical).
func (e *Emulator) sameMessage(a, b node.Message) bool {
	if a == nil || b == nil || a.MessageType() != b.MessageType() {
		return a == nil && b == nil
	}
	x, errA := e.messages.EncodeMessage(a)
	y, errB := e.messages.EncodeMessage(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}
