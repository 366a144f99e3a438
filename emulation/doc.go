// Package emulation is crystalball's ModelNet replacement: a deterministic
// discrete-event loop that runs many node.Cores in one process on virtual
// time, over an emulated wide-area network with loss, resets and churn. A
// run is a pure function of its Config and its one Seed: the same seed and
// code give a byte-identical trace.
//
// The package is logic only: no goroutines, no sockets, no wall clock inside
// the loop (Run reads it once, for Result.WallTime), no global randomness.
//
// # Time and the event queue
//
// Virtual time starts at Epoch (the Unix epoch, UTC) and advances only from
// one event to the next. Pending work sits in a binary heap ordered by
// (time, sequence number): ties are broken by insertion order, never by map
// iteration. Events are node starts, application calls, message arrivals,
// timer expiries, transport errors, churn leaves and rejoins. Timers mirror
// the cores' TimerOps; a cancelled or rescheduled timer's old entry is
// skipped without counting as an event.
//
// # Nodes
//
// Config.Nodes nodes with IDs 1..N each run a node.Core built from
// Config.Spec.New, with a seed derived from the run seed and the node ID.
// Node i starts (EventInit) at a time drawn uniformly in
// [0, Config.StartSpread]; the workload's application calls
// (Config.Workload(id, false)) are queued right after, at the same instant.
// A node that has not started yet counts as down.
//
// # Network
//
// Every directed pair of nodes has a TCP-like FIFO channel (and datagrams,
// see Datagrams). The path
// properties come from a Topology (topology.go): latency, jitter bound and
// loss per link. The default AccessTopology gives each node an access
// latency, with link latency access(a)+access(b), rescaled so the mean RTT
// over all pairs is 130 ms (the paper's INET topology), and each pair a loss
// probability uniform in [0.001, 0.005]. A message's delivery time is
//
//	now + latency + U[0, jitter] + retransmissions
//
// where each lost transmission (probability = the link's loss) adds an RTO
// of max(Network.MinRTO, 2·RTT), doubling for each further loss of the same
// packet (TCP backoff): loss adds delay and never loses a message on a live
// connection. The result is then raised to the previous delivery time on the
// same channel, so jitter and retransmission never reorder a channel (equal
// times keep send order). Messages a node sends to itself take
// Network.SelfDelay and need no connection. Bandwidth is off by default
// (every link unlimited); see Bandwidth and send queues.
//
// # Bandwidth and send queues
//
// With Network.Uplink or Network.Downlink set (bits per second; INETUplink
// and INETDownlink, 1 and 5 Mb/s, are the paper's INET figures,
// INETAccessLinks sets both), every node has access links of that
// capacity, and a message (or datagram) to another node takes time in
// proportion to its size: the envelope as the live transport carries it,
// node.FrameHeaderLen plus Registry.AppendEnvelope's encoding (checkpoint
// number included), encoded into a reused buffer at the send. It waits
// FIFO at its sender's uplink — one queue per node, whatever the receiver
// — and leaves it size·8/Uplink after the previous message did (rounded up
// to the nanosecond); then crosses the link as above (latency, jitter,
// retransmissions, raised to the channel's previous arrival, so a channel
// stays FIFO); then waits FIFO at its receiver's downlink, in order of
// arrival there, and is delivered size·8/Downlink after the previous
// message left the downlink. An unlimited link (0) adds no time. Messages
// to self use no link; a message the network drops at the send (a refused
// connection, a stale one) uses none either. A message accepted is
// committed: a reset of its sender while it waits at the uplink does not
// withdraw it. The snapshot protocol's messages use the same links and
// queues, so their cost shows in the service's own delivery times.
// A message on its way to the downlink is not an event (it is not traced
// or counted); InFlight lists it.
//
// Each connection (directed pair) has a send queue above the uplink: the
// bytes of its accepted messages not yet out of the sender's uplink. A
// message sent with node.Env.TrySend (Envelope.Refusable) is refused when
// that queue is not empty and would exceed Network.SendQueueBytes
// (default DefaultSendQueueBytes, 64 KiB) with it: an empty queue accepts a
// message of any size. Env.Send is never refused, and with an unlimited
// uplink nothing is. A refused message is not transmitted (not counted in
// Messages.Sent, not seen by Config.OnNetwork, no connection opened), and
// the sender is stepped through its pipeline with node.EventSendRefused
// (Peer, Msg) at once — after the step that sent it and before anything
// else happens to that node, layer ticks included — one step per refused
// message in send order; refusals of a refusal's handler follow those
// already waiting. The trace line reads "n3 send-refused T to n7 -> ...";
// a service without node.SendRefusedHandler ignores it (a silent loss).
// A node that gets more than 1,000 refusals at one virtual instant (a
// service that retries from HandleSendRefused without arming a timer)
// fails the run with an error wrapping ErrRefusalLoop that names the node,
// the peer and the seed.
//
// Result.Links (nil without bandwidth) counts the bytes and messages put
// on uplinks, the service's apart from the snapshot layer's, the refused
// sends, and the mean and maximum waits at uplinks and downlinks;
// Emulator.NodeLinks gives one node's share and Emulator.SendQueue a
// connection's queue. Turning bandwidth on costs an encoding per send and
// a queue item per message at a finite downlink: on the gossip benchmark
// (BenchmarkEmulatedEvents, links=inet) 1.1× the time per event at 25
// nodes and about 1.7× at 100; on RandTree (100 nodes, one hour) the wall
// time is the same within the runs' spread (docs/PERFORMANCE.md,
// "Emulator bandwidth").
//
// # Connections and transport errors
//
// Each node has an incarnation number, 0 at start and incremented whenever
// it loses its state (Reset, Down, churn leave). Connections are explicit:
//
//   - The first send from a to b when a holds no connection to b opens one
//     (no handshake delay) recording both ends' incarnations. Both a and b now
//     hold it; if b held an older connection to a (one that went stale
//     because a reset silently), the new one replaces it silently: b learns
//     nothing.
//   - The connection is pending at b until its first message arrives (that
//     message is its SYN, as in TCP, where a connection is established when
//     the SYN arrives). On that arrival, if b is live — in any incarnation —
//     and holds no other connection to a, the connection is bound to b's
//     current incarnation and the message is delivered: the first messages
//     of a connection reach a b that reset after they were sent (MaceMC's
//     RandTree bug: a JoinReply reaching the node that asked for it after
//     it reset). A reset of b while the connection is pending sends no RST
//     for it (b's end was never established), and a's writes on it are not
//     stale. If b is down when the first message arrives, or its new
//     incarnation opened a connection of its own to a meanwhile, the
//     message is refused as below, and so are the connection's later
//     messages. Once established, the rules below hold.
//   - A reset or leave of b drops all of b's timers, its connections and its
//     service state (the core steps EventReset when b comes back up). With an
//     RST (not silent), every peer still holding a connection to b gets
//     EventTransportError(b) after the one-way latency, and the connection is
//     removed when the error is delivered. A silent reset (the RST is lost)
//     leaves the peers' connections stale.
//   - A send over a stale connection (b's incarnation is no longer the
//     recorded one, or b is down) is dropped, and a gets
//     EventTransportError(b) one RTT later (the RST answering the write);
//     the connection is removed then. Further sends before that error are
//     dropped too, without a second error.
//   - A message in flight to b on an established connection when b resets
//     arrives at an incarnation the connection was not bound to: it is
//     dropped on arrival, and its sender (if it still
//     holds that connection's incarnation and was not already told) gets a
//     transport error when the RST gets back, one-way latency after the
//     arrival. Messages in flight from a node that reset are still
//     delivered: they were already in the network.
//   - While b is down (left, not yet back) a connection attempt to it is
//     refused: the message is dropped and the sender gets a transport error
//     after one RTT (if b goes down while the first message is on its way,
//     one-way latency after the arrival). A node ID outside 1..N behaves like a down node (the
//     error comes after Network.MinRTO).
//   - BreakConnection(a, b) breaks a connection on purpose: everything in
//     flight on it is lost, a gets a transport error at once and b after the
//     one-way latency.
//
// At most one transport error is reported per connection end, so a burst
// of sends to a dead peer yields one error. A transport error is delivered
// only to the incarnation it was meant for; it is always delivered (even if
// a newer connection to the peer has replaced the broken one, in which case
// the newer one is kept): the service learns that messages it sent may
// have been lost. The next send after an error opens a new connection.
//
// # Datagrams
//
// A datagram (node.Env.SendDatagram) uses no connection. It arrives after
// the link's one-way latency plus a jitter draw of its own, U[0, jitter],
// and is not raised to any earlier delivery, so datagrams between the same
// pair overtake each other (and messages). With the link's loss probability
// it is lost, and never retransmitted. It is dropped silently — no transport
// error for anyone, no RST — if its receiver is down when it is sent or when
// it arrives, resets before it arrives, or the link is cut (Partition,
// Isolate) when it is sent or when it arrives; one to an ID outside 1..N
// vanishes at once. Connections, RSTs and BreakConnection do not concern it,
// nor does a steering verdict's connection break (a filtered datagram is
// only dropped). A datagram to self takes Network.SelfDelay and is never
// lost.
//
// Each datagram, except one to an ID outside 1..N, is an event when it would
// arrive: "nB datagram T from nA -> hash=... sends=N" when delivered, "nB
// drop datagram T from nA (REASON)" when not, REASON being lost, receiver
// down, receiver reset, partitioned or fault (DropNext).
// Result.Messages.Datagrams counts them (nil, and absent from the JSON, for
// a run without datagrams); their deliveries are "message" events and their
// losses "drop" events in EventsByKind. Their draws come from a stream per
// directed pair of their own (see Seeds), so adding datagrams to a run
// leaves its messages' timing alone, and a run without datagrams traces
// exactly as before.
//
// With snapshot layers a datagram carries the checkpoint number and forces
// the receiver's checkpoint, but a snapshot never records it as in flight
// (package snapshot); Config.OnNetwork flags it (NetworkEvent.Datagram).
// InFlight lists the datagrams the network will still deliver, flagged, so
// the explorer's start state holds them.
//
// # Declared delivery
//
// A message whose type the service declares unreliable (node.Spec.Delivery)
// travels on its connection as any other, and at Config.Delivery's rates
// the network also does to it what the declaration allows, and nothing
// more: loses it (dropped on arrival, "nB drop message T from nA (lost)",
// no transport error, the connection staying up), copies it while it is
// in flight (the copy joins the channel's tail at a time drawn before the
// original arrives, and arrives up to DuplicateDelay after it), or holds
// it back up to ReorderDelay so that later messages overtake it — only
// messages of types that may be reordered, and at most the bound its type
// declares; the others arrive behind it. Messages sent while their
// connection is being opened, and messages to self, are left alone.
// Result.Messages.Delivery counts what was done. The draws come from a
// stream per directed channel of their own (see Seeds), made only for a
// declared message when a rate is set, so a service that declares nothing
// or a run without rates traces exactly as before.
//
// # Churn
//
// With Churn.Rate > 0, leaves form a Poisson process of that many events
// per minute (exponential gaps), starting after Churn.After and, when
// Churn.Until is set, ending there (nodes that are down still come back, so
// the rest of the run is a heal-and-converge phase). Each picks a
// live node uniformly, takes it down (silently with probability
// Churn.SilentFraction, else with an RST) and brings it back after a
// downtime drawn from an exponential distribution with mean Churn.Downtime.
// Coming back is EventReset on the node's existing core (a fresh service
// value and Init; the node's random source carries on), followed by the
// workload's restart calls (Config.Workload(id, true)). The scenario
// methods Reset, Down and Up give the same transitions under script control.
//
// # Connection breaks
//
// With Breaks.Rate > 0, connection breaks form a Poisson process of their
// own beside churn (between Breaks.After and Breaks.Until). Each picks,
// uniformly, one end of an established connection between two live nodes
// (pending connections, whose first message is still on its way, are
// left out) and breaks it as BreakConnection does: everything in flight
// both ways is lost, that end's service gets a transport error at once
// and the other's after the one-way latency ("nA break nB network" in the
// trace). Both processes stay up. A break that finds no open connection
// is skipped. Result.Breaks counts both.
//
// # Lasting faults
//
// Config.Nemesis schedules the faults that last (nemesis.go), which the
// explorer explores with the same meaning (package consequence, "Lasting
// faults"): crash-stops (Crash: a live node goes down silently and comes
// back after a downtime, or never), partitions (PartitionGroups, Isolate,
// Partition, CutOneWay: links cut both ways or one way, healed after a
// length or never), clock jumps (JumpClock: a node's Env.Now moves for
// good, its timers unchanged) and timer skew (every timer of a node fires
// a fixed amount early or late, drawn within NemesisConfig.TimerSkew).
// Crashes, partitions and jumps come as Poisson processes of their own
// (each from its own seed stream, so a run without them draws exactly what
// it always drew) and from a fault schedule, a nemesis script
// (ParseSchedule, emulate --schedule: "at 30s partition {1,2} | {3}; at
// 90s heal; at 100s crash 2 for 60s"). Result.Nemesis counts them. The
// faults the nemesis injects are reported to every node's steering layer
// (steering.Layer.ObserveFault), so the rounds explore the kinds the run
// shows; the scenario methods report nothing.
//
// # Seeds
//
// The run seed is split per subsystem with a SplitMix64 derivation:
// topology, start times, churn, connection breaks, the lasting faults' processes and each node's timer skew, per-node core seeds, one stream per
// network channel for jitter and loss, one per directed pair for the
// datagrams' jitter and loss (seeded on the pair's first datagram), and one
// per directed channel for declared delivery faults (seeded on the
// channel's first declared message under a rate). Changing the draws of one subsystem
// (say, a different churn rate) does not shift the numbers of the others,
// so the start of two such runs is identical up to the first churn event.
//
// # Trace
//
// With Config.Trace set, every processed event writes one line:
//
//	00:01:02.345678901 n13 message randtree.Join from n9 -> hash=<32 hex digits> sends=2
//	00:01:05.000000000 n7 down silent churn
//	00:01:05.041250000 n7 drop message randtree.Probe from n3 (receiver down)
//
// The clock is virtual time since Epoch; a core step is followed by the
// node's state fingerprint hash after the step and the number of messages
// (and datagrams) it sent. Reset events read "reset rst" or "reset silent", restarts "up". The
// trace is the reproducibility contract: same seed and code, same bytes.
//
// With Config.TraceCauses, a core step's line also says what the step
// caused — the service's sends in order (":" a message, "~" a datagram)
// and the timers it set — so that a reader can link each delivery to its
// send and each timer to the step that set it (the event graph of
// 'crystalball trace show --graph'):
//
//	00:01:02.345678901 n13 message randtree.Join from n9 -> hash=<32 hex digits> sends=2 to=n9:randtree.JoinReply,n7:randtree.UpdateSibling set=recovery
//
// # Observer
//
// After every event that ran a handler or changed the set of live nodes
// (not after drops), each safety property of the spec is evaluated once on
// the true global state (View: the live nodes and their services). Result
// counts, per property, the post-event states in which it was violated (the
// paper's "121 states that contain inconsistencies"), the episodes
// (holds→violated transitions), and the time, event and error of the first
// violation; Config.OnViolation sees each violated state. At the end of Run
// the liveness properties are evaluated on the final state.
//
// Over time, the observer also judges every bounded property (node.Within)
// after every event, by node.Obligation's rule, and every liveness
// property every TimedConfig.Every of virtual time: Result.Timed gives each
// one's availability (the share of the run it held) and outages (start,
// length, the error), a bounded property's outage being an obligation
// that lasted past its bound — reported through Config.OnViolation when
// the bound passes, during the run. For a spec with a history property
// (node.OnHistory) the emulator records the run's client history
// (node.Invoke, node.Respond; History) and Result.History judges it.
//
// # Snapshots
//
// With Config.Snapshots set, every node's pipeline (see Steering) starts
// with a snapshot.Layer, the layer.Layer the live shell hosts, so the
// snapshot rules are the layer's in both shells: it stamps every message
// the service sends with the node's checkpoint number; every arriving
// message goes to it first, and it may checkpoint the node state before
// the core handles it, and consumes the snapshot protocol's own messages
// (they never reach the service). Protocol messages travel on the same
// emulated channels as the service's (latency, jitter, loss, resets,
// refused connections and transport errors apply alike); transport errors
// reach the layer and then the service. The layer's ticks (periodic
// checkpoint increments, timeouts, scheduled gathers) come due through the
// pipeline's NextDue, one queue item per node with the postponed events. A
// node that goes down loses its stored checkpoints at that moment
// (snapshot.Layer.Crash; the EventReset of its restart leaves the layer
// alone) but keeps its checkpoint number; a connection a steering verdict
// breaks is broken for both ends' services, as a network break is: each
// gets a transport error (the live runtime does the same).
//
// After the layer come the scripted DropNext faults (a layer of the
// emulator's own: a message a rule discards has passed the snapshot
// layer, so a checkpoint its number forces is taken, but reaches neither
// steering nor the handler), then steering, then Config.Layers'. A reset
// is a restart of the durability contract: a node.Durable service
// recovers its durable part from the previous value, and the pipeline
// gives every layer.Durable the last state it made durable once the
// reset went through the layers (the layer object survives the reset),
// as a live node finds both in its store (layer.Pipeline.Restart). The
// durable writes of the pipeline's outcomes are not kept anywhere else:
// the emulator does not persist.
//
// What the emulator reports beyond the rules comes from the layer's
// extension point snapshot.Layer.OnEffects, which sees every call's
// checkpoints, protocol sends, completed and failed gathers as they
// happen: completed gathers are traced ("snapshot gathered cn=...
// nodes=...") and passed to SnapshotConfig.OnSnapshot (and, through the
// layer's OnSnapshot, to steering), failed ones to SnapshotConfig.OnFailure,
// and Config.OnNetwork and SnapshotConfig.OnCheckpoint give checkers one
// global order of every send, delivery, drop and checkpoint: a forced
// checkpoint is observed before the delivery of the message that forced
// it, and a checkpoint the layer's After hook takes (a gather's new round)
// after the sends of the step it follows. Result.Snapshots sums the
// layers' Status. Without Config.Snapshots the emulator behaves, and
// traces, exactly as before.
//
// # Steering
//
// Every node's core runs inside a layer.Pipeline, the layer pipeline the
// live shell hosts too (its layers: see Snapshots): every event a node
// handles passes through it, and it holds the events a layer postponed
// (layer.Verdict.RetryAt) until the loop delivers them again (a queue item
// at the pipeline's NextDue). With
// Config.Steering set, the pipeline holds a steering.Layer — the same type
// the live shell runs (SteeringConfig.Predictors may leave some in mode
// Off). Every snapshot a node gathers is handed to its layer
// (steering.Layer.Gathered), whose round runs on a steering.SyncRunner: at
// once, inside the loop, charged in virtual time —
// SteeringConfig.CostPerState per state it explored — so a run stays a
// pure function of its seed however fast the machine is. What a round
// installs, and when, is the layer's policy, the live shell's too: the
// filters in force stay while a round explores, joined at once by the
// filters of its replayed paths; the round's whole filter set replaces
// them when its cost has passed (a later round or a reset of the node
// supersedes it). Before a message, timer, application call or transport
// error reaches a node's handler, the layer's Gate decides: the filters
// first, then, with SteeringConfig.Immediate, the immediate safety check
// on the node's core and its last snapshot's view. A dropped message is
// consumed (with steering.Config.BreakConnection the connection to its
// sender breaks and only the sender is told); a postponed event is tried
// again steering.Config.PostponeDelay later. The scripted AppCall bypasses
// the gate (layer.Pipeline.StepUngated). SteeringConfig.OnRound sees every
// round's report and OnIntervention every event kept from a handler; both
// are traced. Result.Steering sums the layers' counters; its
// ExplorationSeconds, the wall time the rounds took (Config.WallClock), is
// measured and so is the one field two runs of a seed do not share.
// Emulator.RunUntilContext and Run hand their context to the rounds.
//
// With Config.Snapshots, a node's pipeline holds the same layer stack as a
// live node's: snapshot.Layer, then (after the emulator's fault layer)
// steering.Layer, wired as the live shell wires them (the steering layer
// takes the snapshot layer's gathers through snapshot.Layer.OnSnapshot). A
// round's replayed paths' filters take effect once the layer call that
// completed the gather has returned (the loop then runs the layers' due
// ticks: steering's, and the snapshot layer's if it is due at that
// instant): before the next event, and for a protocol message before it
// is traced; the event whose arrival completed the gather (a transport
// error from a member) passes the gate as it stood, as it does live.
//
// Every dead end a round predicts is settled by the global check
// (confirm.go): its liveness property is evaluated on the whole system
// after every event while the dead end is pending, and
// SteeringResult.DeadEndsConfirmed, DeadEndsRetracted and DeadEndsPending
// count the outcome by steering.LivenessWatch's rule (grace
// steering.Config.ConfirmGrace), beside the nodes' own settlements from
// their snapshots (NodeViewConfirmed, NodeViewRetracted).
//
// # Rates
//
// The emulator accounts what its runs show of each kind of event
// (Emulator.Rates: travel times as scheduled, timer delays as set, the
// result's counters); WalkWeights runs a service briefly and turns them
// into walk weights (steering.EventRates.WalkWeights) for an offline
// check.
//
// # Messages
//
// The emulator applies node.Registry.CheckMessage, the one rule every host
// applies, as the explorer and nodetest do: every step's service sends are
// checked (Registry.CheckSends) before they reach the network, and every
// application call (the workload's, Submit's, AppCall's) before it is
// queued or run. A message outside Config.Spec.Messages fails the run with
// an error that names the node, the message type and the seed to rerun
// with, wrapping node.ErrUnknownMessageType.
//
// # Failures
//
// A panic in a handler or a property check stops the loop with a
// *PanicError naming the node, the event, the virtual time and the seed to
// rerun with ("rerun with seed=N").
package emulation
