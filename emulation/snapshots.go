package emulation

import (
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// SnapshotConfig runs a snapshot.Layer, first in the layer.Pipeline of every
// emulated node (see the package documentation, "Snapshots"). Zero fields
// take the defaults documented on each (DefaultSnapshotConfig).
type SnapshotConfig struct {
	// Manager configures every node's snapshot layer (snapshot.NewLayer).
	// Registry, when nil, is the service's (Spec.Registry).
	// Manager.GatherInterval applies to the nodes Gatherers selects; the
	// others gather only when told (Gather).
	Manager snapshot.Config
	// Gatherers selects the nodes that gather automatically. Nil means
	// every node.
	Gatherers func(id node.ID) bool
	// OnSnapshot, when non-nil, sees every completed gather. It runs inside
	// the loop, before the node's steering layer gets the snapshot: it
	// must not call the Emulator. The snapshot is immutable and shared:
	// keep it, do not modify it.
	OnSnapshot func(id node.ID, s *snapshot.Snapshot)
	// OnCheckpoint, when non-nil, sees every checkpoint any layer takes,
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
	// Protocol is set for a layer's own messages (layer.Message:
	// snapshot protocol messages, steering requests).
	Protocol bool
	// Datagram is set for a datagram (node.Env.SendDatagram): unordered,
	// never recorded in a snapshot's channel state, so a checker of
	// channel state leaves it out.
	Datagram bool
}

// SnapshotResult sums the snapshot layers' counters and the gathers.
type SnapshotResult struct {
	// Totals sums every node's snapshot.Stats (CN is the maximum).
	Totals snapshot.Stats `json:"totals"`
	// Gathers and Failures count completed and given-up gathers.
	Gathers  int64 `json:"gathers"`
	Failures int64 `json:"failures"`
	// ProtocolMessages counts delivered layer messages (snapshot protocol,
	// steering requests).
	ProtocolMessages int64 `json:"protocol_messages"`
}

// newSnapshots builds node n's snapshot layer (snapshot.Layer, the layer
// the live shell hosts), which reports the Manager's effects to the
// emulator (snapEffects).
func (e *Emulator) newSnapshots(n *emNode) (*snapshot.Layer, error) {
	sc := e.cfg.Snapshots
	c := sc.Manager
	if c.Registry == nil {
		c.Registry = e.registry
	}
	if sc.Gatherers != nil && !sc.Gatherers(n.id) {
		c.GatherInterval = 0
	}
	l, err := snapshot.NewLayer(c, nil)
	if err != nil {
		return nil, err
	}
	l.OnEffects(func(fx snapshot.LayerEffects) { e.snapEffects(n, fx) })
	return l, nil
}

// Snapshots returns node id's snapshot layer (nil without
// Config.Snapshots). It is the emulator's own: read its Status and Last,
// do not call its layer.Layer methods, Gather, Crash or ConnectionBroken.
func (e *Emulator) Snapshots(id node.ID) *snapshot.Layer {
	if n := e.node(id); n != nil {
		return n.snap.layer
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
	if n.snap.layer == nil {
		return fmt.Errorf("emulation: Gather: no snapshot managers (Config.Snapshots is nil)")
	}
	out, err := n.snap.layer.Gather(e.clockOf(n))
	if err != nil {
		return fmt.Errorf("emulation: Gather at %v: %w", id, err)
	}
	e.sendEnvs(n, out)
	e.afterLayers(n)
	return e.err
}

// observeNet reports a message to Config.OnNetwork.
func (e *Emulator) observeNet(kind NetworkEventKind, id uint64, from, to node.ID, cn uint64, msg node.Message) {
	if e.cfg.OnNetwork == nil {
		return
	}
	e.emitNet(NetworkEvent{Kind: kind, ID: id, From: from, To: to, CN: cn, Msg: msg, Protocol: layer.IsMessage(msg)})
}

// emitNet numbers and timestamps ev and hands it to Config.OnNetwork.
func (e *Emulator) emitNet(ev NetworkEvent) {
	e.obsSeq++
	ev.Seq, ev.At = e.obsSeq, e.now
	e.cfg.OnNetwork(ev)
}

// observeArrival reports the delivery of a message or datagram that is
// about to run through n's pipeline. With a snapshot layer the report
// waits until the layer has reported the checkpoint the message may force
// (snapEffects), so checkers see the checkpoint first; flushArrival sends
// it after the pipeline step in any case.
func (e *Emulator) observeArrival(n *emNode, ev NetworkEvent) {
	if e.cfg.OnNetwork == nil {
		return
	}
	if n.snap.layer == nil {
		e.emitNet(ev)
		return
	}
	n.arrival, n.arrivalSet = ev, true
}

// flushArrival reports n's pending delivery, if any.
func (e *Emulator) flushArrival(n *emNode) {
	if n.arrivalSet {
		n.arrivalSet = false
		e.emitNet(n.arrival)
	}
}

// snapEffects reports what n's snapshot layer made its Manager do (the
// layer's OnEffects hook), as it happens: checkpoints to
// SnapshotConfig.OnCheckpoint (then the delivery that forced them, if
// any), completed gathers to the trace and SnapshotConfig.OnSnapshot (the
// steering layer then gets them through the layer's OnSnapshot), gathers
// given up to the trace and SnapshotConfig.OnFailure, and a tick's or a
// Gather's work to the trace.
//
// The effects of the layer's After hook are held until the loop has
// carried out the step (afterStep): the service's sends of the step were
// stamped before them, so they are observed first, as they happened.
func (e *Emulator) snapEffects(n *emNode, lf snapshot.LayerEffects) {
	n.snapBusy = true
	if lf.Call == snapshot.CallAfter {
		fx := &lf.Effects
		n.snap.after = append(n.snap.after, snapshot.LayerEffects{Call: lf.Call, At: lf.At, CN: lf.CN, Effects: snapshot.Effects{
			Taken: slices.Clone(fx.Taken), Snapshots: slices.Clone(fx.Snapshots), Failures: slices.Clone(fx.Failures)}})
		n.snap.afterSends += len(fx.Sends)
		return
	}
	e.reportSnap(n, lf)
}

// afterStep reports the effects of n's snapshot layer's After hook that
// snapEffects held, once the step's sends went out.
func (e *Emulator) afterStep(n *emNode) {
	held := n.snap.after
	n.snap.after, n.snap.afterSends = n.snap.after[:0], 0
	for _, lf := range held {
		if e.err == nil {
			e.reportSnap(n, lf)
		}
	}
	clear(held)
}

// reportSnap reports one call's effects of n's snapshot layer (see
// snapEffects).
func (e *Emulator) reportSnap(n *emNode, lf snapshot.LayerEffects) {
	sc := e.cfg.Snapshots
	fx := &lf.Effects
	if sc.OnCheckpoint != nil {
		for _, t := range fx.Taken {
			e.obsSeq++
			sc.OnCheckpoint(CheckpointEvent{Seq: e.obsSeq, At: e.now, Node: n.id, CN: t.CN, Reason: t.Reason, Hash: t.Hash, Size: t.Size})
		}
	}
	e.flushArrival(n)
	for _, s := range fx.Snapshots {
		e.snapGathers++
		n.gathered = true
		if e.cfg.Trace != nil {
			e.traceLabel(n.id, fmt.Sprintf("snapshot gathered cn=%d nodes=%d dead=%d excluded=%d rounds=%d", s.CN, len(s.Nodes), len(s.Dead), len(s.Excluded), s.Rounds))
		}
		if sc.OnSnapshot != nil {
			sc.OnSnapshot(n.id, s)
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
	if e.cfg.Trace != nil && (lf.Call == snapshot.CallTick || lf.Call == snapshot.CallGather) && len(fx.Taken)+len(fx.Sends) > 0 {
		e.traceLabel(n.id, fmt.Sprintf("snapshot %s cn=%d checkpoints=%d sends=%d", lf.Call, lf.CN, len(fx.Taken), len(fx.Sends)))
	}
}

// snapshotResult sums the snapshot layers' counters (their Status).
func (e *Emulator) snapshotResult() *SnapshotResult {
	if e.cfg.Snapshots == nil {
		return nil
	}
	r := &SnapshotResult{Gathers: e.snapGathers, Failures: e.snapFailures, ProtocolMessages: e.st.protocol}
	t := &r.Totals
	for _, n := range e.nodes[1:] {
		s := n.snap.layer.Status(e.Now()).Stats
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
		t.CNRejected += s.CNRejected
		t.CNCaughtUp += s.CNCaughtUp
		t.Exhausted = t.Exhausted || s.Exhausted
	}
	return r
}

// nodeSnapshots is one node's snapshot layer (nil without
// Config.Snapshots) and the effects of its After calls held by
// snapEffects until afterStep reports them with the step; afterSends
// counts the sends among them.
type nodeSnapshots struct {
	layer      *snapshot.Layer
	after      []snapshot.LayerEffects
	afterSends int
}

// crashSnapshots makes n's snapshot layer lose its stored checkpoints
// as n goes down, not when it comes back (the EventReset then leaves the
// layer alone).
func (e *Emulator) crashSnapshots(n *emNode) {
	if n.snap.layer == nil {
		return
	}
	e.sendEnvs(n, n.snap.layer.Crash(e.clockOf(n)))
	n.gathered = false
}

// layersRegistry is the registry of the service's messages and the
// built-in layers' own (nil without Config.Snapshots): the link model
// sizes the layers' messages as the live transport would carry them.
func layersRegistry(s settings) (*node.Registry, error) {
	if s.Snapshots == nil {
		return nil, nil
	}
	msgs := append(append([]node.Message(nil), s.Spec.Messages...), snapshot.Messages()...)
	if s.Steering != nil {
		msgs = append(msgs, steering.Messages()...)
	}
	reg, err := node.NewRegistry(msgs...)
	if err != nil {
		return nil, fmt.Errorf("emulation: snapshot protocol messages: %w", err)
	}
	return reg, nil
}
