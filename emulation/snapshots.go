package emulation

import (
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// SnapshotConfig runs a snapshot.Manager beside every emulated node (see
// the package documentation, "Snapshots"). Zero fields take the defaults
// documented on each (DefaultSnapshotConfig).
type SnapshotConfig struct {
	// Manager configures every node's manager. Registry, when nil, is the
	// service's (Spec.Registry). Manager.GatherInterval applies to the
	// nodes Gatherers selects; the others gather only when told (Gather).
	Manager snapshot.Config
	// Gatherers selects the nodes that gather automatically. Nil means
	// every node.
	Gatherers func(id node.ID) bool
	// OnSnapshot, when non-nil, sees every completed gather. It runs inside
	// the loop: it must not call the Emulator. The snapshot is the caller's
	// to keep.
	OnSnapshot func(id node.ID, s *snapshot.Snapshot)
	// OnCheckpoint, when non-nil, sees every checkpoint any manager takes,
	// in the global order of network observations (see Config.OnNetwork).
	OnCheckpoint func(CheckpointEvent)
	// OnFailure, when non-nil, sees every gather given up.
	OnFailure func(id node.ID, f snapshot.Failure)
}

// DefaultSnapshotConfig returns the defaults of a SnapshotConfig's zero
// fields: the Manager's are snapshot.DefaultConfig's (its Registry, when
// nil, is the service's); every node gathers; no callbacks.
func DefaultSnapshotConfig() SnapshotConfig {
	return SnapshotConfig{Manager: snapshot.DefaultConfig()}
}

// CheckpointEvent is a checkpoint taken by node Node's manager.
type CheckpointEvent struct {
	// Seq orders it among all observations (NetworkEvent.Seq).
	Seq    uint64
	At     time.Duration
	Node   node.ID
	CN     uint64
	Reason snapshot.Reason
	// Hash is the xxh3-64 hash of the checkpoint (as the snapshot protocol
	// names checkpoints); Size its length.
	Hash uint64
	Size int
}

// NetworkEventKind says what happened to a message.
type NetworkEventKind uint8

// The kinds of network observation.
const (
	// NetSend: Env.Send (or a snapshot manager) emitted the message.
	NetSend NetworkEventKind = iota + 1
	// NetDeliver: the message reached the receiving node (its service, or
	// its snapshot manager for protocol messages).
	NetDeliver
	// NetDrop: the network lost the message (see the transport rules).
	NetDrop
)

// NetworkEvent is one omniscient observation of a message, for checkers.
type NetworkEvent struct {
	Kind NetworkEventKind
	// Seq is a global sequence number over all observations (network
	// events and checkpoints), strictly increasing in processing order.
	Seq uint64
	// ID identifies the message: its Send, Deliver and Drop share it.
	ID       uint64
	At       time.Duration
	From, To node.ID
	// CN is the checkpoint number the envelope carries.
	CN  uint64
	Msg node.Message
	// Protocol is set for snapshot protocol messages.
	Protocol bool
	// Datagram is set for a datagram (node.Env.SendDatagram): unordered,
	// never recorded in a snapshot's channel state, so a checker of
	// channel state leaves it out.
	Datagram bool
}

// SnapshotResult sums the managers' counters and the gathers.
type SnapshotResult struct {
	// Totals sums every node's snapshot.Stats (CN is the maximum).
	Totals snapshot.Stats `json:"totals"`
	// Gathers and Failures count completed and given-up gathers.
	Gathers  int64 `json:"gathers"`
	Failures int64 `json:"failures"`
	// ProtocolMessages counts delivered protocol messages.
	ProtocolMessages int64 `json:"protocol_messages"`
}

// newManager builds node n's snapshot manager.
func (e *Emulator) newManager(id node.ID, core *node.Core) (*snapshot.Manager, error) {
	sc := e.cfg.Snapshots
	c := sc.Manager
	if c.Registry == nil {
		c.Registry = e.registry
	}
	if sc.Gatherers != nil && !sc.Gatherers(id) {
		c.GatherInterval = 0
	}
	return snapshot.New(c, id, core)
}

// Manager returns node id's snapshot manager (nil without
// Config.Snapshots). It is the emulator's own: read it, do not call it.
func (e *Emulator) Manager(id node.ID) *snapshot.Manager {
	if n := e.node(id); n != nil {
		return n.mgr
	}
	return nil
}

// Gather makes live node id start gathering a snapshot now. It needs
// Config.Snapshots.
func (e *Emulator) Gather(id node.ID) error {
	n, err := e.liveNode("Gather", id)
	if err != nil {
		return err
	}
	if n.mgr == nil {
		return fmt.Errorf("emulation: Gather: no snapshot managers (Config.Snapshots is nil)")
	}
	fx, err := n.mgr.Gather(Epoch.Add(e.now))
	if err != nil {
		return fmt.Errorf("emulation: Gather at %v: %w", id, err)
	}
	e.applyMgr(n, fx, "gather")
	return e.err
}

func (e *Emulator) observeNet(kind NetworkEventKind, id uint64, from, to node.ID, cn uint64, msg node.Message) {
	if e.cfg.OnNetwork == nil {
		return
	}
	e.obsSeq++
	e.cfg.OnNetwork(NetworkEvent{Kind: kind, Seq: e.obsSeq, ID: id, At: e.now, From: from, To: to, CN: cn, Msg: msg, Protocol: snapshot.IsProtocol(msg)})
}

// applyMgr carries out a manager's effects for n: checkpoint observations,
// protocol sends, completed and failed gathers; then re-arms its tick.
// what names the call in the trace.
func (e *Emulator) applyMgr(n *emNode, fx snapshot.Effects, what string) {
	sc := e.cfg.Snapshots
	if !n.takenDone {
		e.applyTaken(n, fx)
	}
	n.takenDone = false
	for i := range fx.Sends {
		e.send(n, &fx.Sends[i])
	}
	for _, s := range fx.Snapshots {
		e.snapGathers++
		if e.cfg.Trace != nil {
			e.traceLabel(n.id, fmt.Sprintf("snapshot gathered cn=%d nodes=%d dead=%d excluded=%d rounds=%d", s.CN, len(s.Nodes), len(s.Dead), len(s.Excluded), s.Rounds))
		}
		if sc.OnSnapshot != nil {
			sc.OnSnapshot(n.id, s)
		}
		if n.steer != nil && e.err == nil {
			// The SyncRunner runs the round now; the layer's due tick puts
			// the replayed paths' filters in force at once, and the rest
			// when the round's charged cost has passed (pipeDue).
			n.steer.Gathered(s)
			if e.err == nil {
				e.tickLayers(n)
				e.syncPipe(n)
			}
		}
	}
	for _, f := range fx.Failures {
		e.snapFailures++
		if e.cfg.Trace != nil {
			e.traceLabel(n.id, "snapshot failed: "+f.Reason)
		}
		if sc.OnFailure != nil {
			sc.OnFailure(n.id, f)
		}
	}
	if e.cfg.Trace != nil && what != "" && (len(fx.Taken) > 0 || len(fx.Sends) > 0) {
		e.traceLabel(n.id, fmt.Sprintf("snapshot %s cn=%d checkpoints=%d sends=%d", what, n.mgr.CN(), len(fx.Taken), len(fx.Sends)))
	}
	e.syncMgr(n)
}

// applyTaken reports the checkpoints in fx; applyMgr then skips them.
func (e *Emulator) applyTaken(n *emNode, fx snapshot.Effects) {
	sc := e.cfg.Snapshots
	n.takenDone = true
	if sc.OnCheckpoint == nil {
		return
	}
	for _, t := range fx.Taken {
		e.obsSeq++
		sc.OnCheckpoint(CheckpointEvent{Seq: e.obsSeq, At: e.now, Node: n.id, CN: t.CN, Reason: t.Reason, Hash: t.Hash, Size: t.Size})
	}
}

// sizeOf is a service message's wire size, computed only when a manager
// needs it (Config.BandwidthFraction).
func (e *Emulator) sizeOf(m node.Message) int {
	if e.cfg.Snapshots == nil || e.cfg.Snapshots.Manager.BandwidthFraction <= 0 {
		return 0
	}
	b, err := e.registry.EncodeMessage(m)
	if err != nil {
		return 0
	}
	return len(b) + 16
}

// syncMgr (re)arms n's manager tick at its NextTick.
func (e *Emulator) syncMgr(n *emNode) {
	if n.mgr == nil || !n.live {
		return
	}
	e.rearm(n, itemSnapshotTick, n.mgr.NextTick().Sub(Epoch), &n.mgrSeq, &n.mgrAt)
}

// mgrTick runs a due manager tick.
func (e *Emulator) mgrTick(it *item) bool {
	n := e.nodes[it.node]
	if n.mgr == nil || !n.live || n.inc != it.inc || n.mgrSeq != it.seq {
		return false
	}
	n.mgrSeq = 0
	fx, err := n.mgr.Tick(Epoch.Add(e.now))
	if err != nil {
		e.fail(fmt.Errorf("emulation: node %v snapshot tick at %s: %w; rerun with seed=%d", n.id, clock(e.now), err, e.cfg.Seed))
		return true
	}
	busy := len(fx.Taken)+len(fx.Sends)+len(fx.Snapshots)+len(fx.Failures) > 0
	e.applyMgr(n, fx, "tick")
	return busy
}

// snapshotResult sums the managers' counters.
func (e *Emulator) snapshotResult() *SnapshotResult {
	if e.cfg.Snapshots == nil {
		return nil
	}
	r := &SnapshotResult{Gathers: e.snapGathers, Failures: e.snapFailures, ProtocolMessages: e.st.protocol}
	t := &r.Totals
	for _, n := range e.nodes[1:] {
		s := n.mgr.Stats()
		t.CN = max(t.CN, s.CN)
		t.Periodic += s.Periodic
		t.Forced += s.Forced
		t.Requested += s.Requested
		t.Stored += s.Stored
		t.StoredBytes += s.StoredBytes
		t.Pruned += s.Pruned
		t.Requests += s.Requests
		t.Responses += s.Responses
		t.Negatives += s.Negatives
		t.NegativeBandwidth += s.NegativeBandwidth
		t.ResponseBytes += s.ResponseBytes
		t.StateBytes += s.StateBytes
		t.RawStateBytes += s.RawStateBytes
		t.Unchanged += s.Unchanged
		t.Deltas += s.Deltas
		t.ServiceBytes += s.ServiceBytes
		t.Gathers += s.Gathers
		t.GathersFailed += s.GathersFailed
		t.Rounds += s.Rounds
		t.BadMessages += s.BadMessages
	}
	return r
}
