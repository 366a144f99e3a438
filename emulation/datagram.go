package emulation

import (
	"fmt"
	mrand "math/rand/v2"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Datagrams (node.Env.SendDatagram; see the package documentation,
// "Datagrams"): no connection, their own latency, jitter and loss per
// datagram, no FIFO order, no transport error.

// dgramDrop is why the network decided, when a datagram was sent, to lose
// it; the loss is carried out (traced, counted) when it would have arrived.
type dgramDrop uint8

const (
	dgKeep dgramDrop = iota
	dgLost           // the link's loss probability
	dgDown           // the receiver was down when it was sent
	dgCut            // the link was cut (Partition) when it was sent
)

func (d dgramDrop) reason() string {
	switch d {
	case dgLost:
		return "lost"
	case dgDown:
		return "receiver down"
	case dgCut:
		return "partitioned"
	}
	return ""
}

// labelDatagram is the stepCore label of a datagram's arrival: the trace
// names the event "datagram T from nX". No other label starts with a NUL.
const labelDatagram = "\x00datagram"

// dgramRand returns the random stream of the datagrams n→p, seeding it on
// first use from the run's network key (apart from the channel's TCP
// stream, so datagrams never shift the draws of messages).
func (e *Emulator) dgramRand(n *emNode, p *peer, to node.ID) *mrand.PCG {
	if p.dg == nil {
		p.dg = mrand.NewPCG(deriveSeed(e.netKey, streamDatagram, uint64(n.id), uint64(to)),
			deriveSeed(^e.netKey, streamDatagram, uint64(to), uint64(n.id)))
	}
	return p.dg
}

// sendDatagram carries out one Env.SendDatagram of node from: it arrives
// after the link's one-way latency plus its own jitter draw (so datagrams
// between one pair may overtake each other), unless the loss draw loses it;
// a datagram to itself takes Network.SelfDelay and is never lost. A
// datagram to a node outside 1..N vanishes at once; one that the network
// loses, or sent to a down node or across a cut link, is queued all the
// same and dropped when it would have arrived, so the trace shows it. Draw
// order per datagram (part of the contract): jitter (if the link has any),
// then loss (if the link has any).
func (e *Emulator) sendDatagram(from *emNode, env *node.Envelope) {
	e.st.dgSent++
	e.netID++
	id := e.netID
	e.observeDgram(NetSend, id, from.id, env.To, env.CN, env.Msg)
	to := env.To
	dst := e.node(to)
	if dst == nil {
		e.st.dgDropped++
		e.observeDgram(NetDrop, id, from.id, to, env.CN, env.Msg)
		return
	}
	it := e.q.alloc()
	it.kind, it.datagram, it.node, it.peer, it.inc, it.msg, it.cn, it.id = itemDeliver, true, to, from.id, dst.inc, env.Msg, env.CN, id
	if to == from.id {
		it.at = e.now + e.cfg.Network.SelfDelay
		e.q.push(it)
		return
	}
	l := e.topo.Link(from.id, to)
	if err := validateLink(l); err != nil {
		e.q.release(it)
		e.fail(fmt.Errorf("%w (%v→%v: %+v)", err, from.id, to, l))
		return
	}
	rng := e.dgramRand(from, e.peerOf(from, to), to)
	d := l.Latency
	if l.Jitter > 0 {
		d += time.Duration(unitFloat(rng.Uint64()) * float64(l.Jitter+1))
	}
	lost := l.Loss > 0 && unitFloat(rng.Uint64()) < l.Loss
	e.rates.Latencies++
	e.rates.LatencySum += d
	switch {
	case lost:
		it.dgDrop = dgLost
	case !dst.live:
		it.dgDrop = dgDown
	case e.faults.cut(from.id, to):
		it.dgDrop = dgCut
	}
	it.at = e.now + d
	if e.linked() {
		// A datagram takes its turn on both access links too (one the
		// network lost, or sent to a down node, leaves the sender's
		// uplink and goes no further).
		size, ok := e.sizeOf(from, env)
		if !ok {
			e.q.release(it)
			return
		}
		it.at = e.uplink(from, nil, env, size) + d
		it.atLink, it.size = it.dgDrop == dgKeep && e.cfg.Network.Downlink > 0, size
	}
	e.q.push(it)
}

// deliverDatagram processes a datagram's arrival: it reaches the service
// if the network did not lose it, the link is not cut now, and the
// receiver is live in the incarnation it was sent to; otherwise it is
// dropped silently (traced "drop datagram T from nX (reason)", no
// transport error for anyone). A datagram goes through the receiver's
// snapshot manager (which checkpoints first if its number is larger),
// DropNext rules and steering like a message; a steering verdict that
// would also break the connection only drops it (there is none).
func (e *Emulator) deliverDatagram(it *item) bool {
	n := e.nodes[it.node]
	reason := it.dgDrop.reason()
	switch {
	case reason != "":
	case e.faults.cut(it.peer, n.id):
		reason = dgCut.reason()
	case !n.live:
		reason = dgDown.reason()
	case n.inc != it.inc:
		reason = "receiver reset"
	}
	if reason != "" {
		e.observeDgram(NetDrop, it.id, it.peer, n.id, it.cn, it.msg)
		if it.dgDrop == dgLost {
			e.st.dgLost++
		} else {
			e.st.dgDropped++
		}
		e.st.count(kindDrop)
		e.traceDrop(n.id, "datagram", it.msg, it.peer, reason)
		return true
	}
	if e.cfg.OnNetwork != nil {
		e.observeArrival(n, NetworkEvent{Kind: NetDeliver, ID: it.id, From: it.peer, To: n.id, CN: it.cn, Msg: it.msg, Datagram: true})
	}
	in := node.Envelope{From: it.peer, To: n.id, CN: it.cn, Msg: it.msg, Datagram: true}
	e.runEvent(n, node.Event{Kind: node.EventMessage, From: it.peer, Msg: it.msg}, &in, labelDatagram)
	return true
}

// observeDgram is observeNet for a datagram.
func (e *Emulator) observeDgram(kind NetworkEventKind, id uint64, from, to node.ID, cn uint64, msg node.Message) {
	if e.cfg.OnNetwork == nil {
		return
	}
	e.obsSeq++
	e.cfg.OnNetwork(NetworkEvent{Kind: kind, Seq: e.obsSeq, ID: id, At: e.now, From: from, To: to, CN: cn, Msg: msg, Datagram: true})
}
