package emulation

import (
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// InFlight returns the messages the emulated network will still deliver: one
// envelope per queued delivery whose receiver is live in the incarnation its
// connection is bound to (any incarnation, while the connection's first
// message is on its way and the receiver holds no other connection to the
// sender) and whose connection is not broken, in delivery order
// (by due time, then by the order they were queued), which is FIFO order on
// every directed channel. With bandwidth, a message still on its way to
// its receiver's downlink counts from its arrival there, and the messages
// of each channel are then put back in send order within the positions
// they hold, so the list stays FIFO per channel. Datagrams the network will still deliver (not
// lost, receiver live in the incarnation they were sent to, link not cut)
// are among them with Datagram set; their order means nothing. It is a read-only snapshot for the explorer
// (package consequence builds a global state from the nodes' states and
// these envelopes): the envelopes are fresh, the messages are shared with
// the emulator and must be treated as read-only. Messages that the loop
// will drop on arrival (lost in a reset or a break) are left out; pending
// application calls, timers and transport errors are not messages and are
// not included.
func (e *Emulator) InFlight() []node.Envelope {
	var items []*item
	for _, it := range e.q.items {
		if it.kind != itemDeliver {
			continue
		}
		n := e.node(it.node)
		if n == nil || !e.deliverable(n, it) {
			continue
		}
		if it.datagram && (it.dgDrop != dgKeep || e.faults.cut(it.peer, it.node)) {
			continue
		}
		if !it.datagram && it.conn != nil && len(e.faults.oneway) > 0 && e.faults.cut(it.peer, it.node) {
			continue // lost on arrival across a link cut one way (CutOneWay)
		}
		items = append(items, it)
	}
	slices.SortFunc(items, func(a, b *item) int {
		if a.at != b.at {
			if a.at < b.at {
				return -1
			}
			return 1
		}
		if a.seq < b.seq {
			return -1
		}
		if a.seq > b.seq {
			return 1
		}
		return 0
	})
	if e.linked() {
		fifoPerChannel(items)
	}
	out := make([]node.Envelope, len(items))
	for i, it := range items {
		out[i] = node.Envelope{From: it.peer, To: it.node, CN: it.cn, Msg: it.msg, Datagram: it.datagram}
	}
	return out
}

// fifoPerChannel reorders the messages (not datagrams) of each directed
// channel into send order (their IDs), within the positions the channel's
// messages hold: a message still due at its receiver's downlink sorts by
// its arrival there, possibly before an earlier message of its channel
// that is being serialised on that downlink.
func fifoPerChannel(items []*item) {
	type pair struct{ from, to node.ID }
	pos := map[pair][]int{}
	var order []pair
	for i, it := range items {
		if it.datagram {
			continue
		}
		k := pair{it.peer, it.node}
		if _, ok := pos[k]; !ok {
			order = append(order, k)
		}
		pos[k] = append(pos[k], i)
	}
	for _, k := range order {
		idx := pos[k]
		chans := make([]*item, len(idx))
		for j, i := range idx {
			chans[j] = items[i]
		}
		slices.SortStableFunc(chans, func(a, b *item) int {
			switch {
			case a.id < b.id:
				return -1
			case a.id > b.id:
				return 1
			}
			return 0
		})
		for j, i := range idx {
			items[i] = chans[j]
		}
	}
}
