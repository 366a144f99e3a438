package nodetest

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// channel is a directed pair of nodes: one FIFO queue of messages.
type channel struct{ from, to node.ID }

// queued is a message waiting in a channel; datagram marks one sent with
// Env.SendDatagram, which may overtake what was queued before it, and
// refusable one sent with Env.TrySend, which the refuse command may take
// back while gen, the sender's event that sent it, is the sender's latest.
type queued struct {
	msg       node.Message
	datagram  bool
	refusable bool
	gen       uint64
}

func (ch channel) reverse() channel { return channel{from: ch.to, to: ch.from} }

// pendingChannels returns the non-empty channels in (to, from) order, the
// one order every command that walks the channels uses, so output never
// depends on map iteration.
func (h *Harness) pendingChannels() []channel {
	var chs []channel
	for ch, q := range h.queues {
		if len(q) > 0 {
			chs = append(chs, ch)
		}
	}
	slices.SortFunc(chs, func(a, b channel) int {
		if a.to != b.to {
			return cmp.Compare(a.to, b.to)
		}
		return cmp.Compare(a.from, b.from)
	})
	return chs
}

// popAt removes and returns the k-th (from 0) message queued on ch. Only a
// datagram may leave before messages queued ahead of it, and only past
// datagrams: a message never overtakes the sender's earlier messages.
func (h *Harness) popAt(ch channel, k int) (node.Message, error) {
	q := h.queues[ch]
	if len(q) == 0 {
		return nil, fmt.Errorf("nothing pending from %v to %v", ch.from, ch.to)
	}
	if k < 0 || k >= len(q) {
		return nil, fmt.Errorf("%d messages pending from %v to %v; no number %d", len(q), ch.from, ch.to, k+1)
	}
	if !q[k].datagram {
		for _, ahead := range q[:k] {
			if !ahead.datagram {
				return nil, fmt.Errorf("message %d from %v to %v (%v) would overtake the message %v", k+1, ch.from, ch.to, q[k].msg, ahead.msg)
			}
		}
	}
	return h.removeAt(ch, k), nil
}

// removeAt removes and returns the k-th (from 0, in range) message queued
// on ch, whatever is ahead of it: a refused message leaves the queue
// without being delivered, so it overtakes nothing.
func (h *Harness) removeAt(ch channel, k int) node.Message {
	q := h.queues[ch]
	msg := q[k].msg
	switch {
	case len(q) == 1:
		delete(h.queues, ch)
	case k == 0:
		q[0] = queued{} // let the message go once delivered
		h.queues[ch] = q[1:]
	default:
		h.queues[ch] = append(q[:k:k], q[k+1:]...)
	}
	return msg
}

// breakConnections closes every connection id has with another node,
// losing the messages queued on them both ways, and returns the peers at
// the other end, ascending. A node's messages to itself travel no
// connection and stay.
func (h *Harness) breakConnections(id node.ID) []node.ID {
	var peers []node.ID
	for ch := range h.contact {
		if ch.from == id && ch.to != id {
			peers = append(peers, ch.to)
		}
	}
	slices.Sort(peers)
	for _, p := range peers {
		ch := channel{from: id, to: p}
		delete(h.contact, ch)
		delete(h.contact, ch.reverse())
		delete(h.queues, ch)
		delete(h.queues, ch.reverse())
	}
	return peers
}
