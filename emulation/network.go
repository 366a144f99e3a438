package emulation

import (
	"fmt"
	mrand "math/rand/v2"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
)

// maxRetransmits bounds the retransmissions of one packet (each doubles the
// RTO, as TCP's backoff does); with per-link loss below 1 the bound is only
// reached with vanishing probability.
const maxRetransmits = 16

// peerOf returns n's record of p, creating it (and seeding the channel's
// random stream) on first contact.
func (e *Emulator) peerOf(n *emNode, p node.ID) *peer {
	if r := n.peers[p]; r != nil {
		return r
	}
	r := &peer{}
	r.rng = *mrand.NewPCG(deriveSeed(e.netKey, uint64(n.id), uint64(p)), deriveSeed(^e.netKey, uint64(p), uint64(n.id)))
	n.peers[p] = r
	return r
}

// rtt returns the round-trip time between a and b (b may be outside the
// topology, in which case the connection attempt fails after MinRTO).
func (e *Emulator) rtt(a, b node.ID) time.Duration {
	if e.node(b) == nil {
		return e.cfg.Network.MinRTO
	}
	return e.topo.Link(a, b).Latency + e.topo.Link(b, a).Latency
}

// doom schedules a transport error about c's other end for n at at, and
// marks c doomed at n so the loss is reported once.
func (e *Emulator) doom(c *conn, n *emNode, at time.Duration) {
	c.setDoomed(n.id)
	other := c.a
	if other == n.id {
		other = c.b
	}
	it := e.q.alloc()
	it.kind, it.at, it.node, it.peer, it.inc, it.conn = itemTransportError, at, n.id, other, n.inc, c
	e.q.push(it)
}

// newConn records a connection from a (incarnation incA) to b, pending at
// b until its first message arrives (bindSYN).
func (e *Emulator) newConn(a node.ID, incA uint64, b node.ID, incB uint64) *conn {
	e.connSeq++
	return &conn{id: e.connSeq, a: a, incA: incA, b: b, incB: incB, pending: true}
}

// stale reports whether a send from a over c to the live or down node dst
// is answered by an RST: the connection was broken, or dst is down, or
// dst's end was established in an earlier incarnation. While c's SYN is on
// its way, dst's end is not established, so a reset of dst does not make
// it stale.
func (c *conn) stale(from node.ID, dst *emNode) bool {
	if c.broken || c.doomed(from) || dst == nil || !dst.live {
		return true
	}
	return !(c.pending && c.b == dst.id) && c.incOf(dst.id) != dst.inc
}

// bindSYN establishes, at its arrival at n, the pending connection c whose
// first message (TCP's SYN) deliverable accepted: c is bound to whichever
// incarnation of n is up, and its later messages are checked against that
// incarnation.
func (e *Emulator) bindSYN(n *emNode, c *conn) {
	c.pending = false
	c.incB = n.inc
	e.peerOf(n, c.a).conn = c
}

// deliverable reports whether the message it, queued to n, reaches n's
// service if nothing changes before it arrives: n is live in the
// incarnation the connection is bound to (any incarnation while its SYN is
// on its way, if n holds no other connection to the sender), and the
// connection was not broken. A message without a connection (to self)
// needs the incarnation it was sent to.
func (e *Emulator) deliverable(n *emNode, it *item) bool {
	c := it.conn
	switch {
	case !n.live:
		return false
	case c == nil:
		return n.inc == it.inc
	case c.broken:
		return false
	case c.pending && c.b == n.id:
		p := n.peers[c.a]
		return p == nil || p.conn == nil || p.conn == c
	}
	return n.inc == c.incOf(n.id)
}

// send carries out one Env.Send of node from (see the package
// documentation for the connection rules).
func (e *Emulator) send(from *emNode, env *node.Envelope) {
	if env.Datagram {
		e.sendDatagram(from, env)
		return
	}
	to := env.To
	p := e.peerOf(from, to)
	linked, size, ok := e.admit(from, p, env)
	if !ok {
		return
	}
	e.st.sent++
	e.netID++
	id := e.netID
	e.observeNet(NetSend, id, from.id, env.To, env.CN, env.Msg)
	if to == from.id {
		e.schedule(p, e.now+e.cfg.Network.SelfDelay, to, from.id, from.inc, env, nil, id)
		return
	}
	dst := e.node(to)
	c := p.conn
	if c == nil {
		if dst == nil || !dst.live || e.faults.cut(from.id, to) {
			// Connection refused (or no such host, or the link is cut by
			// Partition): the attempt fails after one RTT; sends until
			// then fail with it.
			c = e.newConn(from.id, from.inc, to, 0)
			c.broken = true
			p.conn = c
			e.doom(c, from, e.now+e.rtt(from.id, to))
			e.st.dropped++
			e.observeNet(NetDrop, id, from.id, to, env.CN, env.Msg)
			return
		}
		c = e.newConn(from.id, from.inc, to, dst.inc)
		p.conn = c
		// The new connection replaces whatever (stale) socket the receiver
		// held for from, silently.
		e.peerOf(dst, from.id).conn = c
	} else if c.stale(from.id, dst) {
		// Stale or broken: the write is answered by an RST one RTT later.
		if !c.doomed(from.id) {
			e.doom(c, from, e.now+e.rtt(from.id, to))
		}
		e.st.dropped++
		e.observeNet(NetDrop, id, from.id, to, env.CN, env.Msg)
		return
	} else if e.faults.cut(from.id, to) {
		e.cutWrite(from, c, dst, env, id)
		return
	}
	l := e.topo.Link(from.id, to)
	if err := validateLink(l); err != nil {
		e.fail(fmt.Errorf("%w (%v→%v: %+v)", err, from.id, to, l))
		return
	}
	d := l.Latency
	if l.Jitter > 0 {
		d += time.Duration(unitFloat(p.rng.Uint64()) * float64(l.Jitter+1))
	}
	if l.Loss > 0 {
		rto := max(e.cfg.Network.MinRTO, 2*(l.Latency+e.topo.Link(to, from.id).Latency))
		for i := 0; i < maxRetransmits && unitFloat(p.rng.Uint64()) < l.Loss; i++ {
			d += rto
			rto *= 2
			e.st.retransmits++
		}
	}
	if e.unreliable(c, env) {
		e.sendUnreliable(from, p, env, c, id, dst.inc, d, linked, size)
		return
	}
	at := e.now + d
	if !linked {
		e.schedule(p, at, to, from.id, dst.inc, env, c, id)
		return
	}
	at = e.uplink(from, p, env, size) + d
	if it := e.schedule(p, at, to, from.id, dst.inc, env, c, id); e.cfg.Network.Downlink > 0 {
		it.atLink, it.size = true, size
	}
}

// schedule queues a delivery on channel p, never before the previous
// delivery on that channel (FIFO: equal times keep insertion order).
func (e *Emulator) schedule(p *peer, at time.Duration, to, from node.ID, inc uint64, env *node.Envelope, c *conn, id uint64) *item {
	if at < p.last {
		at = p.last
	}
	p.last = at
	e.rates.Latencies++
	e.rates.LatencySum += at - e.now
	it := e.q.alloc()
	it.kind, it.at, it.node, it.peer, it.inc, it.msg, it.conn = itemDeliver, at, to, from, inc, env.Msg, c
	it.cn, it.id = env.CN, id
	e.q.push(it)
	return it
}

// deliver processes a message arrival: it reaches the service if
// deliverable says so (the first message of a pending connection binds it
// to the receiver's current incarnation); otherwise it is dropped and the
// sender, if it still holds the connection's incarnation, gets a transport
// error when the RST gets back.
func (e *Emulator) deliver(it *item) bool {
	if it.datagram {
		return e.deliverDatagram(it)
	}
	if it.dgDrop == dgLost {
		return e.loseMessage(it) // a declared unreliable message (delivery.go)
	}
	n := e.nodes[it.node]
	c := it.conn
	if c != nil && !c.broken && e.faults.cut(it.peer, n.id) {
		c.broken = true // a connection that outlived a Partition is lost in it
	}
	ok := e.deliverable(n, it)
	if c != nil && c.pending && c.b == n.id {
		if ok {
			e.bindSYN(n, c)
		} else {
			c.pending = false // refused: later messages find n's end stale
		}
	}
	if ok {
		// The message runs through n's pipeline: the snapshot layer
		// (which checkpoints first if its number is larger, and consumes
		// protocol messages), the DropNext faults, steering, the core.
		// Checkpoints are observed before the delivery, the delivery
		// before the sends it causes (observeArrival).
		if e.cfg.OnNetwork != nil {
			e.observeArrival(n, NetworkEvent{Kind: NetDeliver, ID: it.id, From: it.peer, To: n.id, CN: it.cn, Msg: it.msg, Protocol: layer.IsMessage(it.msg)})
		}
		in := node.Envelope{From: it.peer, To: n.id, CN: it.cn, Msg: it.msg}
		e.runEvent(n, node.Event{Kind: node.EventMessage, From: it.peer, Msg: it.msg}, &in, "")
		return true
	}
	e.observeNet(NetDrop, it.id, it.peer, n.id, it.cn, it.msg)
	e.st.dropped++
	e.st.count(kindDrop)
	reason := "receiver reset"
	switch {
	case c != nil && c.broken:
		reason = "connection broken"
	case !n.live:
		reason = "receiver down"
	}
	if c != nil {
		s := e.nodes[it.peer]
		if s.live && s.inc == c.incOf(s.id) && !c.doomed(s.id) {
			e.doom(c, s, e.now+e.topo.Link(n.id, s.id).Latency)
		}
	}
	if e.cfg.Trace != nil {
		e.traceDrop(n.id, "message", it.msg, it.peer, reason)
	}
	return true
}
