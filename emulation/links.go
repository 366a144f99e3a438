package emulation

import (
	"errors"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
)

// Access links (see the package documentation, "Bandwidth and send
// queues"): every node has an uplink and a downlink of finite capacity,
// each a FIFO queue; a connection's send queue is the part of the
// sender's uplink queue that belongs to it, and a TrySend that would
// overflow it is refused.

// The paper's INET topology figures for a node's access links (CrystalBall
// §5.5: "about 5 Mb/s down, 1 Mb/s up"), in bits per second.
const (
	INETUplink   int64 = 1_000_000
	INETDownlink int64 = 5_000_000
)

// DefaultSendQueueBytes is the default bound of a connection's send queue
// (NetworkConfig.SendQueueBytes): 64 KiB, the order of a TCP socket
// buffer.
const DefaultSendQueueBytes = 64 << 10

// maxRefusalsAtInstant bounds the refusals one node may get at one virtual
// instant: a service that answers HandleSendRefused with another TrySend
// to the same full queue would otherwise spin forever without time
// passing.
const maxRefusalsAtInstant = 1000

// ErrRefusalLoop is wrapped by the error that fails a run in which a node
// got more than 1,000 refused sends at one virtual instant (a service
// retrying a refused send from HandleSendRefused instead of arming a
// timer).
var ErrRefusalLoop = errors.New("emulation: refused sends without time passing")

// INETAccessLinks returns n with the paper's INET access links: INETUplink
// and INETDownlink per node (SendQueueBytes is left as it is).
func INETAccessLinks(n NetworkConfig) NetworkConfig {
	n.Uplink, n.Downlink = INETUplink, INETDownlink
	return n
}

// linked reports whether the run models bandwidth (either link finite).
func (e *Emulator) linked() bool {
	return e.cfg.Network.Uplink > 0 || e.cfg.Network.Downlink > 0
}

// txTime is the serialisation time of size bytes on a link of bps bits/s,
// rounded up to the nanosecond; zero for an unlimited link (bps 0).
func txTime(size int, bps int64) time.Duration {
	if bps <= 0 {
		return 0
	}
	bits := int64(size) * 8 * int64(time.Second)
	return time.Duration((bits + bps - 1) / bps)
}

// queued is one accepted message in a connection's send queue: its size
// and when its serialisation on the sender's uplink ends.
type queued struct {
	done time.Duration
	size int
}

// sendQueue is a connection's send queue (per directed pair): the
// accepted messages not yet serialised on the sender's uplink, oldest
// first.
type sendQueue struct {
	items []queued
	head  int
	bytes int
}

// drain forgets the messages whose serialisation ended at or before now.
func (q *sendQueue) drain(now time.Duration) {
	for q.head < len(q.items) && q.items[q.head].done <= now {
		q.bytes -= q.items[q.head].size
		q.head++
	}
	switch {
	case q.head == len(q.items):
		q.items, q.head = q.items[:0], 0
	case q.head >= 64 && q.head*2 >= len(q.items):
		// A queue that never empties must not grow without bound.
		n := copy(q.items, q.items[q.head:])
		q.items, q.head = q.items[:n], 0
	}
}

func (q *sendQueue) push(done time.Duration, size int) {
	q.items = append(q.items, queued{done: done, size: size})
	q.bytes += size
}

// linkCounters are the link model's counters, per node and summed.
type linkCounters struct {
	serviceBytes, layerBytes int64
	serviceMsgs, layerMsgs   int64
	refused                  int64
	upWaitSum, downWaitSum   time.Duration
	upWaitMax, downWaitMax   time.Duration
	upMsgs, downMsgs         int64
}

// refusal is a refused TrySend waiting to be reported to its sender.
type refusal struct {
	to  node.ID
	msg node.Message
}

// wireSize returns the size of env as the live transport would carry it
// (frame header and encoded envelope), encoding into a reused buffer.
func (e *Emulator) wireSize(env *node.Envelope) (int, error) {
	reg := e.messages
	if e.registry != nil {
		reg = e.registry
	}
	out := *env
	out.Refusable = false
	b, err := reg.AppendEnvelope(e.wireBuf[:0], out)
	if err != nil {
		return 0, err
	}
	e.wireBuf = b[:0]
	return node.FrameHeaderLen + len(b), nil
}

// sizeOf is wireSize for a send of from, failing the run on an error (a
// message the wire codec cannot encode would fail the live runtime too).
func (e *Emulator) sizeOf(from *emNode, env *node.Envelope) (int, bool) {
	size, err := e.wireSize(env)
	if err != nil {
		e.fail(fmt.Errorf("emulation: node %v: encoding %s to %v for the link model at %s: %w; rerun with seed=%d",
			from.id, msgType(env.Msg), env.To, clock(e.now), err, e.cfg.Seed))
		return 0, false
	}
	return size, true
}

// admit prepares a message send of from on channel p for the link model:
// linked reports whether it uses the links (bandwidth on, not to self),
// size is then its wire size; ok is false when it goes no further (a
// TrySend refused, or an encoding failure that failed the run).
func (e *Emulator) admit(from *emNode, p *peer, env *node.Envelope) (linked bool, size int, ok bool) {
	if !e.linked() || env.To == from.id {
		return false, 0, true
	}
	if size, ok = e.sizeOf(from, env); !ok {
		return true, 0, false
	}
	if env.Refusable && e.cfg.Network.Uplink > 0 && e.refuse(from, p, env, size) {
		return true, size, false
	}
	return true, size, true
}

// refuse reports whether the TrySend env of from, of size bytes, is
// refused: its connection's send queue holds other bytes and would exceed
// Network.SendQueueBytes with it (an empty queue accepts a message of any
// size, so a message larger than the bound is not refused forever). A
// refused send is queued for its HandleSendRefused (runRefusals); one
// beyond maxRefusalsAtInstant at one instant fails the run.
func (e *Emulator) refuse(from *emNode, p *peer, env *node.Envelope, size int) bool {
	p.sq.drain(e.now)
	if p.sq.bytes == 0 || p.sq.bytes+size <= e.cfg.Network.SendQueueBytes {
		return false
	}
	if from.refusedAt != e.now || from.refusedRun == 0 {
		from.refusedAt, from.refusedRun = e.now, 0
	}
	from.refusedRun++
	if from.refusedRun > maxRefusalsAtInstant {
		e.fail(fmt.Errorf("%w: node %v got %d refused sends at %s (the last to %v, %s; send queue %d of %d bytes): a service must not retry a refused send before time passes (arm a timer in HandleSendRefused); rerun with seed=%d",
			ErrRefusalLoop, from.id, from.refusedRun-1, clock(e.now), env.To, msgType(env.Msg), p.sq.bytes, e.cfg.Network.SendQueueBytes, e.cfg.Seed))
		return true
	}
	e.count(from, func(c *linkCounters) { c.refused++ })
	from.refused = append(from.refused, refusal{to: env.To, msg: env.Msg})
	return true
}

// count applies f to the run's link counters and to from's.
func (e *Emulator) count(n *emNode, f func(*linkCounters)) {
	f(&e.links)
	f(&n.links)
}

// uplink serialises size bytes of from's env on its uplink, after the
// messages already queued there (FIFO per node, whatever the receiver),
// and returns when the last bit has left. A message on a connection (p
// non-nil) joins p's send queue until then.
func (e *Emulator) uplink(from *emNode, p *peer, env *node.Envelope, size int) time.Duration {
	start := max(e.now, from.upFree)
	done := start + txTime(size, e.cfg.Network.Uplink)
	from.upFree = done
	if p != nil {
		p.sq.drain(e.now)
		p.sq.push(done, size)
	}
	wait := start - e.now
	layer := layer.IsMessage(env.Msg)
	e.count(from, func(c *linkCounters) {
		if layer {
			c.layerBytes += int64(size)
			c.layerMsgs++
		} else {
			c.serviceBytes += int64(size)
			c.serviceMsgs++
		}
		c.upMsgs++
		c.upWaitSum += wait
		c.upWaitMax = max(c.upWaitMax, wait)
	})
	return done
}

// downlink carries out a message's arrival at its receiver's downlink
// (an itemDeliver with atLink set): it waits there FIFO behind the
// messages that arrived before it, is serialised, and is delivered when
// its last bit is in (a new itemDeliver at that time). Channels stay FIFO:
// a channel's arrivals at the downlink are in send order, and the
// downlink keeps that order. Not an event.
func (e *Emulator) downlink(it *item) bool {
	n := e.nodes[it.node]
	start := max(e.now, n.downFree)
	done := start + txTime(it.size, e.cfg.Network.Downlink)
	n.downFree = done
	wait := start - e.now
	e.count(n, func(c *linkCounters) {
		c.downMsgs++
		c.downWaitSum += wait
		c.downWaitMax = max(c.downWaitMax, wait)
	})
	next := e.q.alloc()
	*next = *it
	next.at, next.atLink = done, false
	e.q.push(next)
	return false
}

// runRefusals steps n with EventSendRefused for each of its refused
// sends, in the order they were sent, before anything else happens to n
// (a refusal's handler may be refused again: its refusals are run by the
// same loop, after those already waiting).
func (e *Emulator) runRefusals(n *emNode) {
	if n.refusing {
		return
	}
	n.refusing = true
	defer func() { n.refusing = false }()
	for i := 0; i < len(n.refused) && e.err == nil && n.live; i++ {
		r := n.refused[i]
		n.refused[i] = refusal{}
		e.runEvent(n, node.Event{Kind: node.EventSendRefused, Peer: r.to, Msg: r.msg}, nil, "")
	}
	clear(n.refused)
	n.refused = n.refused[:0]
}

// LinkStats is the link model's account of a run, or of one node
// (Result.Links, Emulator.NodeLinks). Bytes are as the live transport
// would carry them (frame header and encoded envelope); messages to self
// use no link and are not counted.
type LinkStats struct {
	// ServiceBytes and ServiceMessages count the service's messages and
	// datagrams put on uplinks (with their checkpoint numbers when
	// snapshots are on).
	ServiceBytes    int64 `json:"service_bytes"`
	ServiceMessages int64 `json:"service_messages"`
	// LayerBytes and LayerMessages count the snapshot protocol's messages
	// (checkpoint requests, responses, markers) on the same links.
	LayerBytes    int64 `json:"layer_bytes"`
	LayerMessages int64 `json:"layer_messages"`
	// Refused counts TrySends refused because their connection's send
	// queue was full (neither transmitted nor counted in Messages.Sent).
	Refused int64 `json:"refused"`
	// UplinkWaitMean and UplinkWaitMax are the time messages waited at
	// their sender's uplink behind earlier ones before their
	// serialisation began (nanoseconds).
	UplinkWaitMean time.Duration `json:"uplink_wait_mean_ns"`
	UplinkWaitMax  time.Duration `json:"uplink_wait_max_ns"`
	// DownlinkWaitMean and DownlinkWaitMax are the same at the receivers'
	// downlinks (zero with an unlimited downlink).
	DownlinkWaitMean time.Duration `json:"downlink_wait_mean_ns"`
	DownlinkWaitMax  time.Duration `json:"downlink_wait_max_ns"`
}

func (c *linkCounters) stats() LinkStats {
	s := LinkStats{
		ServiceBytes: c.serviceBytes, ServiceMessages: c.serviceMsgs,
		LayerBytes: c.layerBytes, LayerMessages: c.layerMsgs,
		Refused:       c.refused,
		UplinkWaitMax: c.upWaitMax, DownlinkWaitMax: c.downWaitMax,
	}
	if c.upMsgs > 0 {
		s.UplinkWaitMean = c.upWaitSum / time.Duration(c.upMsgs)
	}
	if c.downMsgs > 0 {
		s.DownlinkWaitMean = c.downWaitSum / time.Duration(c.downMsgs)
	}
	return s
}

// NodeLinks returns node id's share of the link counters (bytes it sent,
// its refused sends, waits at its uplink and downlink); the zero value
// without bandwidth (Network.Uplink and Downlink both zero) or for an ID
// outside 1..Nodes.
func (e *Emulator) NodeLinks(id node.ID) LinkStats {
	if n := e.node(id); n != nil {
		return n.links.stats()
	}
	return LinkStats{}
}

// SendQueue returns the bytes in the send queue of the connection from a
// to b now (zero without bandwidth): what a TrySend from a to b is
// checked against.
func (e *Emulator) SendQueue(a, b node.ID) int {
	n := e.node(a)
	if n == nil || n.peers[b] == nil {
		return 0
	}
	p := n.peers[b]
	p.sq.drain(e.now)
	return p.sq.bytes
}
