package emulation

import (
	"container/heap"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// itemKind is what a queued item does when it comes due.
type itemKind uint8

const (
	itemStart          itemKind = iota + 1 // first start of node: EventInit
	itemApp                                // application call msg to node (incarnation inc)
	itemDeliver                            // message msg from peer to node over conn
	itemTimer                              // timer name of node; live only if node.timers[name] == seq
	itemTransportError                     // transport error about peer to node, for conn
	itemChurn                              // next churn leave
	itemRejoin                             // churned node comes back (if still down in incarnation inc)
	itemPipeline                           // the node's pipeline is due (postponed events, layer ticks); live only if node.pipeSeq == seq
	itemBreak                              // next scheduled connection break (breaks.go)
	itemDuplicate                          // the network copies msg from peer to node in flight (delivery.go); dl: the copy's earliest arrival
	itemNemesis                            // a lasting fault or its end (nemesis.go): what id names
)

// item is one scheduled occurrence. Items are pooled: the queue owns them
// from push to pop, and the loop returns them to the free list after
// processing, so a long run allocates a bounded number of them.
type item struct {
	at   time.Duration // virtual time since Epoch
	seq  uint64        // insertion order; breaks ties in at
	kind itemKind
	node node.ID // the node the item happens to
	peer node.ID // sender (deliver) or broken peer (transport error)
	inc  uint64  // the node's incarnation the item belongs to
	msg  node.Message
	name string        // timer name
	dl   time.Duration // timer deadline (== at)
	conn *conn         // connection a message travels on / an error is about
	cn   uint64        // the envelope's checkpoint number
	id   uint64        // message ID (NetworkEvent.ID)
	// datagram marks a datagram's arrival (itemDeliver); dgDrop, when
	// set, is why the network already decided at the send to lose it.
	datagram bool
	dgDrop   dgramDrop
	// atLink marks a message (or datagram) arriving at its receiver's
	// downlink rather than at the receiver (links.go); size is its wire
	// size then.
	atLink bool
	size   int
}

// eventQueue is a min-heap of items ordered by (at, seq): ties are broken by
// insertion order, never by map iteration or pointer values.
type eventQueue struct {
	items []*item
	free  []*item
	seq   uint64
}

func (q *eventQueue) Len() int { return len(q.items) }
func (q *eventQueue) Less(i, j int) bool {
	a, b := q.items[i], q.items[j]
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}
func (q *eventQueue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *eventQueue) Push(x any)    { q.items = append(q.items, x.(*item)) }
func (q *eventQueue) Pop() any {
	n := len(q.items) - 1
	it := q.items[n]
	q.items[n] = nil
	q.items = q.items[:n]
	return it
}

// alloc returns a zeroed item from the free list (or a new one).
func (q *eventQueue) alloc() *item {
	if n := len(q.free); n > 0 {
		it := q.free[n-1]
		q.free = q.free[:n-1]
		return it
	}
	return new(item)
}

// release zeroes it (dropping its references) and returns it to the free
// list.
func (q *eventQueue) release(it *item) {
	*it = item{}
	q.free = append(q.free, it)
}

// push stamps it with the next sequence number and queues it.
func (q *eventQueue) push(it *item) {
	q.seq++
	it.seq = q.seq
	heap.Push(q, it)
}

// peek returns the earliest item without removing it, or nil.
func (q *eventQueue) peek() *item {
	if len(q.items) == 0 {
		return nil
	}
	return q.items[0]
}

// pop removes and returns the earliest item.
func (q *eventQueue) pop() *item { return heap.Pop(q).(*item) }

// find returns the index of the earliest item (by at, then seq) that match
// accepts, or -1. It scans the whole heap: directed runs (directed.go)
// take items out of turn, a few per forced event.
func (q *eventQueue) find(match func(*item) bool) int {
	best := -1
	for i, it := range q.items {
		if match(it) && (best < 0 || q.Less(i, best)) {
			best = i
		}
	}
	return best
}

// findNth returns the index of the earliest item match accepts that is
// either one counted rejects or the n-th (from 0) of those counted
// accepts, in (at, seq) order; -1 if there is none.
func (q *eventQueue) findNth(match, counted func(*item) bool, n int) int {
	var idx []int
	for i, it := range q.items {
		if match(it) {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int {
		if q.Less(a, b) {
			return -1
		}
		return 1
	})
	k := 0
	for _, i := range idx {
		if !counted(q.items[i]) {
			return i
		}
		if k == n {
			return i
		}
		k++
	}
	return -1
}

// remove takes the item at index i out of the queue and returns it.
func (q *eventQueue) remove(i int) *item { return heap.Remove(q, i).(*item) }
