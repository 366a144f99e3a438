package macetransport

import (
	"log/slog"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// receive handles a data packet from peer. A SYN opens a new incoming
// connection, replacing the one the receiver had — unless it is a
// retransmission of the current connection's SYN, or (with the correction)
// carries an identifier no newer than the current connection's: a stale
// SYN from an earlier connection, which MaceMC's bug took for a new one.
// A packet in sequence is delivered to the application; any other is
// ignored. Either way the receiver answers with a cumulative ACK of what
// it has, so a packet out of sequence draws a duplicate ACK.
func (s *State) receive(env node.Env, peer node.ID, m Data) {
	i := s.inIndex(peer)
	if m.SYN && !s.sameConnection(i, m) {
		if s.opts.FixMonotoneSYN && i >= 0 && m.Conn <= s.In[i].Conn {
			c := &s.In[i]
			env.SendDatagram(peer, Ack{ISN: c.ISN, Seq: c.Next - 1})
			return
		}
		i = s.accept(peer, m)
	}
	if i < 0 {
		// A packet of a connection whose SYN never arrived: there is
		// nothing to acknowledge.
		env.Logger().Debug("macetransport: data without a connection", slog.Any("from", peer), slog.Uint64("seq", m.Seq))
		return
	}
	c := &s.In[i]
	if m.Seq == c.Next {
		c.Next++
		c.Total++
		if len(c.Delivered) >= s.opts.DeliveredLog {
			c.Delivered = slices.Delete(c.Delivered, 0, len(c.Delivered)-s.opts.DeliveredLog+1)
		}
		c.Delivered = append(c.Delivered, m.Msg)
	}
	env.SendDatagram(peer, Ack{ISN: c.ISN, Seq: c.Next - 1})
}

// sameConnection reports whether the SYN m belongs to the incoming
// connection at index i (a retransmission of its SYN).
func (s *State) sameConnection(i int, m Data) bool {
	return i >= 0 && s.In[i].ISN == m.Seq && s.In[i].Conn == m.Conn
}

// accept opens the incoming connection the SYN m starts, replacing peer's
// previous one, and returns its index.
func (s *State) accept(peer node.ID, m Data) int {
	c := InConn{Peer: peer, ISN: m.Seq, Conn: m.Conn, Next: m.Seq}
	i, found := slices.BinarySearchFunc(s.In, peer, func(in InConn, p node.ID) int { return cmpID(in.Peer, p) })
	if found {
		s.In[i] = c
	} else {
		s.In = slices.Insert(s.In, i, c)
	}
	return i
}
