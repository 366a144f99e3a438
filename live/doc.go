// Package live is crystalball's live shell: it runs one node of a service
// (a node.Service with its node.Layers: a snapshot manager, a steering
// controller) over real TCP connections, wall-clock timers and memberlist.
// It is the only package of the project that imports package net and
// memberlist; the deterministic cores (node, snapshot, consequence,
// steering, emulation, the services) do not, and make purity checks it.
//
// Runtime is the live shell: NewRuntime(cfg, spec), Start, Submit for
// application calls, Status, Stop. One goroutine owns the Core and steps it
// in Runtime.dispatch, the single point every event and every send passes
// (where a snapshot or steering layer hooks in). Around it: a framed TCP
// transport (node's frame codec: length prefix checked against the maximum frame size
// before allocating, CRC-32C; handshake.go: node ID and cluster label), one
// outbound connection per peer dialled on first send, inbound connections
// accepted from peers, a broken connection delivered as EventTransportError;
// wall-clock timers mirroring the core's TimerOps; and memberlist for
// membership, discovery of service addresses (node metadata) and failure
// detection. Stop leaves no goroutine behind.
//
// Logging: the runtime logs with zap (RuntimeConfig.Logger); the core and
// the service see the same logger as a *slog.Logger (node.Env.Logger),
// bridged with zapslog, so service code never depends on zap.
package live
