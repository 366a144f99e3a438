// Package node is crystalball's service model and deterministic node core.
//
// A protocol is written once, as a Service: a Go struct whose exported
// fields are its state and whose handlers act only through an Env. The
// same handler code then runs in three places: a live node over TCP, the
// emulator (package emulation) and the explorer (package consequence).
// That is what makes a predicted violation a statement about the
// deployed code.
//
// # Writing a service
//
// What an author writes, in order:
//
//   - A Spec: the service's Name, New (a Factory returning a fresh value
//     with its configuration applied), its Messages (one prototype per
//     message and application call, each named by embedding Named[T] or
//     by a MessageType method), its Properties and, for a service that
//     tolerates an unreliable network, its Delivery.
//   - The Service: a struct whose exported fields are the node's state
//     (checkpointed, hashed, shipped to peers; encoded with msgpack, so
//     `msgpack:"-"` marks configuration that is not state). Embed
//     NopHandlers and write the handlers the protocol needs: Init,
//     HandleMessage, HandleTimer, HandleApp, HandleTransportError (and
//     SendRefusedHandler's HandleSendRefused for TrySend). Cloner makes
//     copies cheap; Durable says what survives a crash.
//   - Handlers act through Env only: Send (FIFO, reliable, a broken
//     connection reported), TrySend (a send the transport may refuse),
//     SendDatagram (best effort), SetTimer and CancelTimer, Rand (a seeded
//     source that is part of the state), Now (the event's time) and
//     Logger. A handler is a function of the state, the event and Env:
//     no wall clock (time.Now), no Go map iteration order in what it
//     sends or stores, no global variable, no goroutine, and no state in
//     unexported fields. nodetest.Conformance checks this on a seeded run
//     of the handlers, naming the event and the first field that
//     differs; 'crystalball check' samples its transitions for it and
//     'emulate --check-determinism' runs twice to compare.
//   - Properties: safety (Always) and liveness (Eventually) predicates
//     over a View of a global state (the next section).
//
// How a state reads to people: 'trace show', a live node's /status and
// /ui and the web view print each node on one line, Summary's: the
// state's String method when it has one — the override, for an author
// who knows a better line — and otherwise its exported fields,
// "Name=value", shortened and bounded (MaxSummaryBytes). Field by field
// views use Fields, which renders every field, durations and IDs by
// their String methods.
//
// # Properties
//
// A service exports its safety (Always) and liveness (Eventually) properties
// as predicates over a View of a global state. The emulator's observer, the
// explorer and the immediate safety check all evaluate the same predicates.
//
// Two more kinds judge more than one state. A bounded property (Within: a
// precondition, a goal and a bound — "while a quorum is connected, a
// leader within 10 s") fails once its obligation, the precondition
// holding while the goal does not, has lasted longer than the bound;
// Obligation is the rule, written once, that the emulator applies after
// every event (reporting each outage when its bound passes), the explorer
// along every path on its virtual clock (where the bound makes it a safety
// property of the timed system) and the steering rounds like a safety
// property. A history property (OnHistory; node/linearizable for
// linearizability through Porcupine) judges the client history.
//
// # Client histories
//
// A service marks its client operations: Invoke(env, op) when an
// operation starts — in HandleApp, or when a client takes the next call of
// its queue — and Respond(env, op, result) when it completes, op naming
// the operation as Invoke did (an equal message at the same node) and
// result its outcome (nil for none, a write's acknowledgement). A KV
// client, say, invokes the Put its application called when it sends the
// request, and responds to it with the reply's value when the reply
// arrives; a lock service responds to Acquire when it grants the lock.
// Both messages must be registered in Spec.Messages. The marks are effects
// (Effects.History), recorded by the host with the node and its clock: the
// emulator over the whole run, the explorer along each path (as part of
// the explored state, for a service that declares a history property). A
// client that reports its operations under way (Client) lets a history
// recorded from a snapshot begin with them. A live node's runtime records
// no history (its Effects.History go unused), and on an Env that records
// none (a replayed object's replay) Invoke and Respond do nothing.
//
// # Internals: the core
//
// Core wraps a Service with its timers and seeded random source (together, a
// State) and advances it with Step, one Event at a time. Step returns Effects
// — messages to send, timer changes — as data; it never performs I/O, starts
// goroutines or reads a clock (time arrives with each event). The caller, a
// "shell", owns the I/O: the emulator turns effects into scheduled events on
// its virtual network, the live runtime into TCP writes and wall-clock timers,
// the explorer into in-flight messages of a global state.
//
//	core, _ := node.NewCore(node.CoreConfig{ID: 1, Factory: newMyService, Seed: 7})
//	fx, _ := core.Step(node.Event{Kind: node.EventInit, At: t0})
//	for _, env := range fx.Sends { transmit(env) }
//	for _, op := range fx.Timers { schedule(op) }
//
// A reset (EventReset) replaces the service with a fresh value from the
// factory and runs Init again: a crashed node loses its memory. A service
// that keeps part of its state on stable storage implements Durable, and
// the core hands the fresh value the incarnation that went down so it can
// copy those fields back before Init (a Paxos acceptor's promise, say).
//
// # State, checkpoints and hashes
//
// A node's State is its service state, its timers and its random source. It
// has a canonical encoding: equal states give equal bytes whatever order Go
// iterated maps in (map entries are sorted by their encoded keys at every
// level). AppendCheckpoint is the complete encoding used for checkpoints and
// restore; AppendFingerprint leaves out timer deadlines and is what Hash
// (128-bit xxh3) digests, because for exploration two states that differ only
// in when a timer fires are the same state. Copy and State.Clone make
// independent copies for speculative execution; a service that implements
// Cloner makes them cheap.
//
// # Messages on the wire
//
// Messages are plain structs registered by their MessageType name in a
// Registry. An Envelope carries type, sender, receiver, the sender's
// checkpoint number and the msgpack body. Every decoder here treats its input
// as hostile: CheckMsgpack verifies, before any decoding, that no length
// header declares more than the remaining input can hold, so a 5-byte array32
// header is an error and never an allocation (whatever the msgpack library
// version does).
//
// # Shells
//
// This package does no I/O and reads no clock: it imports no network
// package (make purity checks it, with every other core package). The live
// shell is package live (TCP, memberlist, wall-clock timers); the emulator is
// package emulation; the explorer is package consequence. All three run the
// same Core; the live shell and the emulator host the same layers around
// it through one pipeline, in package node/layer (the shells' side: a
// service author never touches it): the order of the hooks for one event,
// what a Gate's Verdict does (drop, break, postpone) and how a postponed
// event comes back are written there once, and the explorer takes the
// same Verdict type from its event filters. A Pipeline returns its effects
// as data (Outcome) for the shell to carry out.
//
// # Datagrams
//
// Env.Send is a message: FIFO per (sender, receiver) pair, and a lost
// connection is reported to the sender (HandleTransportError).
// Env.SendDatagram is a datagram: best effort — delivered at most once, in
// any order, or lost silently; it needs no connection and never causes a
// transport error. The receiver handles both with HandleMessage. In the
// core's Effects a datagram is a send like any other, in handler order,
// with Envelope.Datagram set (so Step stays allocation-free and shells that
// know nothing of datagrams still compile); each shell then keeps the
// contract its own way: the emulator gives each datagram its own latency
// and loss (package emulation), the explorer holds them as an unordered
// multiset per pair and may drop them (package consequence). The live
// runtime (package live) carries a datagram on the connection the sender's messages use,
// as a frame whose envelope starts with 0xE2 instead of 0xE1, so it arrives
// in order — a valid best-effort delivery — and the receiver's layers see
// the flag. It is dropped, and counted (Counters.DatagramsDropped), never
// queued past a failed dial nor reported: when the peer is unreachable (its
// last dial failed and the redial backoff runs), when the connection's
// queue is full, or when it cannot be encoded or is too large; a
// connection that carried datagrams only breaks without a transport error.
// A steering Verdict's Break is ignored for a datagram.
//
// A service whose messages need not be reliable — raft's, a gossip's —
// says so in Spec.Delivery (Delivery, DeliverySpec): its messages, or
// messages of the types it names, may then be lost, duplicated or
// overtaken by up to a bound of later ones. The explorer and the emulator
// explore and produce exactly those behaviours (within budgets and at
// rates of their own configuration); the live runtime keeps sending them
// over TCP. A declaration says what the service tolerates.
//
// # Refused sends
//
// Env.TrySend is a message the transport may refuse instead of queueing it
// without bound, as the Mace transport refuses new data when its buffer is
// full: a service that can do something useful about back-pressure (send
// the diff later, pick another peer) uses it; Env.Send is never refused.
// In the core's Effects such a send has Envelope.Refusable set. A shell
// that refuses it does not transmit it and steps the sender with
// EventSendRefused (Peer and Msg) before any other event of that node, so
// no checkpoint, timer or delivery comes between a send and its refusal;
// the service handles it with SendRefusedHandler.HandleSendRefused. What
// each runtime refuses:
//   - the emulator (package emulation) refuses a TrySend when the
//     connection's send queue, the bytes of its messages waiting for the
//     sender's uplink, is not empty and would exceed its bound with it
//     (emulation.NetworkConfig.SendQueueBytes; only with a finite
//     NetworkConfig.Uplink);
//   - the explorer (package consequence) treats a refusal as a fault, like
//     a dropped datagram: any message the node's latest step sent with
//     TrySend and that is still in its channel may be refused, at most
//     Faults.Refusals times along a path (the latest step but refusals:
//     one step's TrySends may be refused one after the other, in the
//     order they were sent);
//   - the live runtime (package live) refuses a TrySend when the bytes
//     waiting in the peer's write queue plus the message would exceed
//     live.RuntimeConfig.Transport.TrySendQueueBytes (a queue with
//     nothing waiting takes a message of any size) or the queue holds SendQueueLen
//     frames, and the connection stays open; a TrySend to self is never
//     refused.
//
// A refused message never reaches its receiver, and the connection stays
// open: messages accepted before and after it are delivered in order. The
// snapshot layer never lets a refusable message stand in for a marker.
package node
