package macetransport

import (
	"log/slog"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// sendMessage hands the application's next message to the connection to
// peer, opening one if there is none.
func (s *State) sendMessage(env node.Env, peer node.ID) {
	s.NextMsg++
	i := s.outIndex(peer)
	if i < 0 {
		s.open(env, peer, []uint64{s.NextMsg})
		return
	}
	c := &s.Out[i]
	c.Queue = append(c.Queue, s.NextMsg)
	s.transmit(env, c)
}

// open starts a new outgoing connection to peer carrying msgs (at least
// one): a new ISN, with the correction a new connection identifier, and the
// SYN packet on its way. There is no handshake: the SYN carries msgs[0].
func (s *State) open(env node.Env, peer node.ID, msgs []uint64) {
	isn := FirstISN + s.Opened*ISNSpacing
	s.Opened++
	c := OutConn{Peer: peer, ISN: isn, Base: isn, Sent: isn, Queue: msgs}
	if s.opts.FixMonotoneSYN {
		c.Conn = s.nextConnID(env)
	}
	i, _ := slices.BinarySearchFunc(s.Out, peer, func(o OutConn, p node.ID) int { return cmpID(o.Peer, p) })
	s.Out = slices.Insert(s.Out, i, c)
	s.transmit(env, &s.Out[i])
}

// nextConnID is MaceMC's MonotoneTime: the time in nanoseconds, or one
// more than the last identifier if the clock has not moved past it, so
// identifiers increase within the node's state even when Now stands still
// (the explorer's clock moves only when a timer fires) and, after a reset
// that lost LastConn, because time has moved on.
func (s *State) nextConnID(env node.Env) uint64 {
	id := uint64(env.Now().UnixNano())
	if id <= s.LastConn {
		id = s.LastConn + 1
	}
	s.LastConn = id
	return id
}

// transmit sends what c may send and has not: before the SYN is
// acknowledged only the SYN packet, after it every queued message. It arms
// the retransmission timer while messages wait for an ACK.
func (s *State) transmit(env node.Env, c *OutConn) {
	end := c.Base + uint64(len(c.Queue))
	if !c.Established {
		end = min(end, c.ISN+1)
	}
	for ; c.Sent < end; c.Sent++ {
		env.SendDatagram(c.Peer, c.packet(c.Sent))
	}
	if len(c.Queue) > 0 && !env.TimerScheduled(retransmitTimer(c.Peer)) {
		env.SetTimer(retransmitTimer(c.Peer), s.opts.RetransmitTimeout)
	}
}

// packet is the packet for sequence number seq, which must lie in
// [Base, Base+len(Queue)): the SYN if seq is the ISN.
func (c *OutConn) packet(seq uint64) Data {
	d := Data{Seq: seq, Msg: c.Queue[seq-c.Base]}
	if seq == c.ISN {
		d.SYN, d.Conn = true, c.Conn
	}
	return d
}

// acked handles an ACK from peer. Any ACK is a sign of life: the retry
// count starts again, even when the ACK is for another connection or
// acknowledges nothing new — which is what keeps the sender of MaceMC's
// Figure 4 retransmitting "DATA 6002" forever to a receiver that answers
// "ACK 2001". An ACK of the current connection drops what it covers from
// the queue, establishes the connection and lets the rest go.
func (s *State) acked(env node.Env, peer node.ID, m Ack) {
	i := s.outIndex(peer)
	if i < 0 {
		return
	}
	c := &s.Out[i]
	c.Retries = 0
	if m.ISN != c.ISN || m.Seq < c.Base {
		return
	}
	if m.Seq >= c.Sent {
		env.Logger().Warn("macetransport: ACK of a packet never sent", slog.Any("from", peer), slog.Uint64("seq", m.Seq), slog.Uint64("sent", c.Sent))
		return
	}
	n := m.Seq - c.Base + 1
	c.Queue = slices.Delete(c.Queue, 0, int(n))
	if len(c.Queue) == 0 {
		c.Queue = nil
	}
	c.Base = m.Seq + 1
	c.Established = true
	env.CancelTimer(retransmitTimer(peer))
	s.transmit(env, c)
}

// timeout handles the retransmission timer of the connection to peer: it
// retransmits the oldest unacknowledged packet, or, after
// Options.MaxRetries timeouts in a row without an ACK, closes the
// connection and reports the error to the application, which resends every
// unacknowledged message on a new connection (new ISN).
func (s *State) timeout(env node.Env, peer node.ID) {
	i := s.outIndex(peer)
	if i < 0 || len(s.Out[i].Queue) == 0 {
		return
	}
	c := &s.Out[i]
	if c.Retries < s.opts.MaxRetries {
		c.Retries++
		env.SendDatagram(peer, c.packet(c.Base))
		env.SetTimer(retransmitTimer(peer), s.opts.RetransmitTimeout)
		return
	}
	unacked := c.Queue
	s.Out = slices.Delete(s.Out, i, i+1)
	s.Failures++
	env.Logger().Info("macetransport: connection failed; the application resends",
		slog.Any("peer", peer), slog.Int("unacked", len(unacked)))
	s.open(env, peer, unacked)
}
