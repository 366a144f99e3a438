// Package live is crystalball's live shell: it runs one node of a service
// (a node.Service with its node.Layers: a snapshot manager, a steering
// controller) over real TCP connections, wall-clock timers and memberlist.
// It is the only package of the project that imports package net and
// memberlist; the deterministic cores (node, snapshot, consequence,
// steering, emulation, the services) do not, and make purity checks it.
//
// Runtime is the live shell: NewRuntime(cfg, spec), Start, Submit for
// application calls, Status, Stop. One goroutine owns the Core and steps it
// through a layer.Pipeline — the layer pipeline the emulator hosts too —,
// the single point every event and every send passes (where the snapshot
// and steering layers hook in, and where a postponed event waits): the
// runtime carries out the pipeline's outcomes (sends, timer operations, a
// connection a verdict breaks) and asks it when it is next due.
// RoundRunner is the steering layer's runner in this shell: its rounds run
// on a goroutine of their own (steering.Runner), so exploration never
// blocks event handling; the steering, snapshot and node packages start no
// goroutine themselves. Around it: a framed TCP
// transport (node's frame codec: length prefix checked against the maximum frame size
// before allocating, CRC-32C; handshake.go: node ID and cluster label;
// tls.go: optional mutual TLS 1.3 with the node ID bound to the peer's
// certificate, RuntimeConfig.TLS), one
// outbound connection per peer dialled on first send, inbound connections
// accepted from peers, a broken connection delivered as EventTransportError;
// wall-clock timers mirroring the core's TimerOps; and memberlist for
// membership, discovery of service addresses (node metadata) and failure
// detection (gossip encrypted with RuntimeConfig.Gossip.Keyring, which
// LoadGossipKeyring reads from a key file; bound by default to a port
// derived from the service port, DefaultGossipBind, so a restarted node
// keeps its gossip address). Stop leaves no goroutine behind.
//
// Refused sends (node's "Refused sends"): each outbound connection counts
// the bytes of the frames waiting in its write queue, from the core
// goroutine's enqueue until the writer has taken them into its 64 KiB
// write buffer (in front of the socket's buffers). A
// node.Env.TrySend that would take them past
// RuntimeConfig.Transport.TrySendQueueBytes (or finds SendQueueLen frames
// waiting) is not queued and closes nothing; the runtime steps the service with
// node.EventSendRefused before anything else — before the messages the
// node sent itself, before transport errors, timers and network events —,
// the refusals of one step in the order sent and ahead of refusals still
// waiting. Everything else about a TrySend is a Send: it dials on first
// use, waits in the queue while the dial runs, and an unreachable peer, an
// unencodable message or one over MaxFrameSize is a transport error. A
// service that answers a refusal by TrySending to the same full queue at
// once (which node.SendRefusedHandler forbids) cannot keep the core
// goroutine spinning: after 1024 refusals in a row, with no other event
// between, a refused TrySend is queued as a Send and an error is logged.
// Counters.SendsRefused counts refusals, Counters.SendQueueBytes is the
// bytes waiting now.
//
// Every peer's cost is bounded (limits.go): inbound connections in total and
// per remote host, an idle deadline and a per-frame read deadline after the
// hello (diallers keep quiet connections alive), a decode memory budget per
// message (node.DecodeBudgetFactor), rate-limited warnings. A hello is
// unauthenticated without TLS, so it never displaces a live inbound
// connection of the same ID with other addresses, displaces one with the
// same addresses only once that connection closed or went silent, never
// overrides memberlist's addresses, and an ID known only from hellos
// expires (RuntimeConfig.Limits.UnconfirmedPeerTTL). memberlist admits a
// member only once it proved itself on the service transport
// (membership_prove.go), unless gossip is keyed; the layer host vouches
// for checkpoint-number catch-ups (snapshot.WitnessHost) only by such
// members' addresses or TLS-authenticated IDs.
//
// Durable state (runtime_durable.go, store.go): with
// RuntimeConfig.Durability.DataDir (or Store) the runtime writes every node.DurableWrite of a pipeline
// outcome to a bbolt store and syncs it before that outcome's sends leave
// the node, sharing one sync among the steps queued behind it (group
// commit), and restarts the node from the store through
// layer.Pipeline.Restart. A node.Durable service without a store needs
// RuntimeConfig.Durability.Ephemeral; a failed store write stops the node
// (Done, Err).
//
// Logging: the runtime logs with zap (RuntimeConfig.Logger); the core and
// the service see the same logger as a *slog.Logger (node.Env.Logger),
// bridged with zapslog, so service code never depends on zap.
package live
