// Package replayed runs existing deterministic code under crystalball: a
// node.Service whose state is an opaque object — a library's state
// machine that can be neither copied nor encoded field by field, such as
// etcd raft's RawNode over its MemoryStorage — rebuilt by replaying its
// inputs from the last durable point.
//
// # What the user writes
//
// An Object has the handlers of a node.Service (Init, HandleMessage,
// HandleTimer, HandleApp, HandleTransportError; HandleSendRefused
// optionally) and Observe, which returns what the object exposes as a
// plain Go value (for raft: the HardState, the log, the SoftState, the
// applied index and the application's state). Config.New builds one from
// the bytes its previous incarnation kept on stable storage
// (DurableObject), nil on a first start. New(Config) checks the
// configuration and gives an Adapter, whose Factory is the Spec.New of
// the service; properties read Observed(v.Service(id)).
//
// # What the state is
//
// The adapter's service value (Service) holds:
//   - the durable bytes of the last durable point (a reset: the previous
//     incarnation's AppendDurable; nil since a first start),
//   - the log of inputs since then — init, messages, timers, calls,
//     transport errors, refused sends — each with its time, the state of
//     the node's random source when the handler first drew from it, and
//     a 64-bit hash of the observation after it,
//   - the observation after the log, and
//   - the object itself when one is materialised (a cache, not state).
//
// The checkpoint encoding is the durable bytes and the log; decoding
// replays the log into a new object and checks the observation hash (of
// every input with Config.CheckEveryInput), so a checkpoint from a hostile peer, or one whose
// replay diverges from what the live object did (the object is not
// deterministic), is an error wrapping node.ErrBadCheckpoint. The
// fingerprint is the canonical encoding of the observation
// (node.Fingerprinter), so two histories that leave the object in the same
// observable state are one state to the explorer.
//
// # The contract the object keeps
//
//   - Its handlers are deterministic given the object, the input and Env
//     (time from Env.Now, randomness from Env.Rand only, no goroutines, no
//     I/O): replaying the same inputs from the same durable bytes gives
//     the same object. A library's own randomness must be replaced by
//     draws from Env.Rand (raft's election timeout comes from
//     crypto/rand: examples/etcdraft/kv writes its own draw over it) or
//     kept out of the way by configuration.
//   - Observe is complete: two objects with equal observations behave
//     alike for every future input. The explorer already relies on this to
//     merge states with equal fingerprints; the adapter relies on it to
//     leave out of the log every input that changes neither the
//     observation nor the node's set of scheduled timers (a tick, a
//     heartbeat answered in the same state), which is what keeps the log,
//     and replays, short (Config.KeepEveryInput turns it off). Observe's
//     result must not alias the object's mutable memory.
//   - Handlers act only through Env, as a node.Service's do; the object
//     never holds Env past the call.
//
// # Three shells
//
// A live node or an emulated one steps its service value in place: the
// object stays materialised and the adapter only appends to the log
// (and, for an input that changed the observation, encodes it). The
// explorer clones a state and steps the clone: a clone takes its
// parent's object when it first steps (the parent's slot is emptied
// atomically, so concurrent workers never share an object), and a clone
// that finds the slot empty — the parent's second successor, a state
// decoded from a checkpoint — replays. The immediate safety check copies
// the live state before every event and so costs the live node one replay
// per event. docs/PERFORMANCE.md ("Replayed objects") has the figures;
// Adapter.Stats counts the replays.
//
// The service is a node.Durable like a hand-written one. A live node with
// a data directory (crystalball node --data-dir) writes its durable
// projection to its store, synced before the messages that depend on it
// leave: for the adapter a value that recovered and has not started,
// encoded as the object's durable bytes (DurableObject). At a restart
// Core.DecodeDurable reads it back (bytes Config.New refuses are
// node.ErrBadDurable) and Core.Restart runs Recover, then Init, which
// builds the object from those bytes: the same as a reset in the
// emulator and the explorer, which keep the previous value in memory.
//
// # When a hand-written state is worth it
//
// A replay costs as many handler calls as the log has inputs since the
// last durable point, and the explorer replays for every successor of a
// state but the first. A protocol whose observable state changes with
// every input (a counter in every message) keeps every input and replays
// long logs; one run for hours without a reset carries its whole history
// in every checkpoint. Writing the state as a plain value with a Clone
// (node.Cloner) is then worth it; the adapter is for code one did not
// write, and for checking it before deciding.
//
// This package does no I/O and reads no clock (make purity checks it).
package replayed
