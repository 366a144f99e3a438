// Package snapshot gathers consistent neighbourhood snapshots: the
// checkpoints of a node and its neighbours at one consistent cut, plus the
// messages in flight between them at that cut. It is crystalball's
// checkpoint manager (the CrystalBall paper's §2.3, §3.1 and §4), and what
// the explorer (package consequence) starts its predictions from.
//
// # How it fits
//
// A Manager is a deterministic core, one per node, beside the node's
// node.Core: no goroutines, no clock, no randomness; time comes in with
// every call and effects (protocol messages to send, checkpoints taken,
// snapshots gathered) go out as data. Layer is the layer.Layer that runs it,
// and the one place its calls are tied to a node's events: both shells
// host it first in every node's layer.Pipeline — the live runtime
// (package live) on its core goroutine, the emulator (package emulation)
// in its event loop —, and the pipeline calls the Manager around every
// core step: Deliver before a message is handled, Sent for every message
// the service sends, AfterStep after every step, TransportError, Tick at
// NextTick, Reset on an EventReset. A shell adds nothing to these rules;
// what it reports beyond them (the emulator's trace, its checkpoint and
// network observers, its counters) it takes from Layer's extension points:
// OnEffects (every call's checkpoints, sends, completed and failed
// gathers, as they happen), OnSnapshot, Last and Status. Two calls are for
// what a shell knows and the node's events do not say: Crash (the node
// lost its state now, before the EventReset of its restart: the emulator
// calls it when a node goes down) and ConnectionBroken (the shell broke a
// connection without telling the service, on a steering verdict: both
// shells call it through layer.Pipeline.ConnectionBroken, Layer being a
// layer.BreakObserver). The protocol's own messages
// (Request, Marker, Response, Negative, Ack) are node.Messages with stable
// names that travel on the same FIFO channels as the service's messages.
//
// # Checkpoint numbers and cuts
//
// Every node keeps a checkpoint number cn. Every message it sends carries
// cn (node.Envelope.CN). On receiving a message with CN > cn the node
// checkpoints its state before the message is handled and adopts CN; cn
// also advances by one every Config.Interval, with a checkpoint. Every
// increase of cn comes with a checkpoint taken at that moment, and numbers
// never decrease (the number survives Reset), so for every k the moment a
// node's number first reaches k is a checkpoint, C(k). The cut k is the
// set of those moments; it is consistent: a message sent after the
// sender's C(k) carries CN ≥ k, so the receiver reached k — and took its
// C(k) — before handling it. A message is sent before its sender's cut
// exactly when its CN < k.
//
// Numbers are the one thing a single peer could use to harm the whole
// cluster: adopted, a number spreads to every node, and one at MaxCN would
// leave no cut above it. So a node adopts a number only within
// Config.CNWindow above its own (sized so honest nodes that hear from each
// other stay within it; see DefaultCNWindow). A message carrying a number
// beyond the window is handled as if it carried the node's own number —
// a service message still reaches the service —, and the number is
// counted (Stats.CNRejected), never adopted from one peer: what it can
// push is the window per message, and the window per Interval (a rate
// limit per witness), so the number space outlives any flood and a
// pushed node stays near enough its neighbours to be followed. A node
// that got more than a window ahead of every member anyway finds its
// Requests refused (ReasonWindow) and rebases to their numbering.
// A node restarted from 0 far behind its cluster catches up when two
// distinct witnesses carry numbers beyond its window (WitnessHost: an
// authenticated peer, a member that proved its address; never an ID a
// hello merely claims): to the smaller, counted in Stats.CNCaughtUp. It
// refuses the cuts up to its new number, as
// after a Reset: messages it handled before the jump did not move it. A
// Request for a cut beyond the window is refused (ReasonWindow), and a
// Negative pointing beyond it leaves its member out. A number that goes
// back on a channel (its sender restarted or rebased) starts the
// channel over, lossy. Numbers stop at MaxCN
// (Stats.Exhausted): the periodic increment stays there and every gather
// fails with FailureExhausted rather than ask for a cut past it.
//
// # Gathering
//
// Gather (or Config.GatherInterval) starts a round for cut cr = cn+1 (the
// gatherer checkpoints at cr). With periodic gathers a node is never blind
// for a whole period (Config.GatherSettle): it gathers shortly after it
// starts or resets, and shortly after its neighbourhood changes (a join, a
// new child, a member gone), changes coalescing, and every gather restarts
// the period. The neighbourhood is the service's
// node.Neighborer, or else the peers it exchanged messages with in the last
// Config.RecentWindow; the members of a gather are the neighbourhood, the
// peers a layer asked for (Manager.Include: steering's filtered peers)
// and the gatherer. The gatherer sends Request{cr, members} to each
// member. A member with cn < cr checkpoints now, stamped cr; otherwise it
// answers with its earliest stored checkpoint with number ≥ cr, which is its
// C(cr). Stored checkpoints obey a byte quota, oldest first; a request
// whose C(cr) was pruned (or lost in a reset) gets a Negative carrying the
// member's cn, and when every member has answered the gatherer retries the
// whole round at the largest number it heard (up to Config.MaxRounds
// rounds). A transport error from a member, or no answer within
// Config.GatherTimeout, marks it dead for this snapshot; a Negative for the
// bandwidth cap leaves it out; a change of the neighbourhood during a
// gather starts a new round (and, with Config.GatherOnChange, a change
// since the last gather starts a gather), except in the last round with
// Config.FinishLastRound, which finishes with the members it asked. A round that ends with no member
// but the gatherer, every one dead or its answer malformed, is a failed
// gather (FailureNoMember), not a snapshot of the gatherer alone: that is
// what a gatherer whose peers drop its traffic would see. Members that
// left themselves out (a bandwidth or size refusal, a pruned checkpoint)
// answered, and the snapshot stands without them.
//
// # Channel state
//
// Beyond the paper, a snapshot records the channel state of the cut, as
// Chandy and Lamport do, with checkpoint numbers as markers. The in-flight
// messages of channel s→j at cut k are those s sent before its C(k)
// (CN < k) that j received after its C(k). A node logs every service
// message that arrives with CN below its number (it crossed some cut). The
// channel s→j is closed for cut k once any message with CN ≥ k arrived
// from s: channels are FIFO and numbers on a channel never decrease, so no
// message with CN < k can follow. To close every channel of the
// neighbourhood promptly, a member answering a Request sends a Marker to
// every other member (and itself) unless the last message it sent on that
// channel already carries a number ≥ the cut; the Request and the Response
// close the channels between member and gatherer. A member answers once the channels
// from all members are closed, or after Config.RecordTimeout with the open
// ones marked incomplete. The channel s→j is marked lossy when messages in
// flight on it may have been lost by the network: a transport error about s
// arrived after j's checkpoint, or before it with nothing from s since, or
// j reset (less than a minute) before its checkpoint with nothing from s
// since.
//
// Datagrams (node.Env.SendDatagram, node.Envelope.Datagram) carry cn and
// force the receiver's checkpoint like messages, so the cut stays
// consistent (no orphans). But they are unordered, so none of the channel
// reasoning above applies to them: a datagram never closes a channel,
// never stands in for a Marker, and is never recorded. A snapshot holds no
// datagram in flight — as if every datagram in flight at the cut was lost,
// which a datagram may be — and the guarantee below is about messages.
//
// # The consistency guarantee
//
// A Snapshot for cut CN holds, for each included node n, the checkpoint
// C_n(CN) (its state when its number first reached CN), and for each
// ordered pair (s, j) of included nodes the channel s→j. Then:
//
//   - no message is received in C_j that s sent after C_s (no orphans);
//   - Channel.Messages are exactly the messages s sent before C_s that j
//     received after C_j and before the channel closed, in order; when
//     Channel.Complete is set that is every message s sent before C_s and
//     had not been received at C_j, except — only when Channel.Lossy is set
//     — those the network lost.
//
// So the included checkpoints plus the in-flight messages form a global
// state the system actually passed through (up to the order of
// concurrent events), which is what exploration must start from. Nodes that
// are dead or excluded are outside the snapshot (the explorer's dummy
// node). The package's tests verify the guarantee against an omniscient
// observer over thousands of gathers in emulated runs with churn.
//
// # Bandwidth
//
// Checkpoints travel zstd-compressed (klauspost/compress), as deltas: the
// last checkpoint the requester acknowledged (Ack) is the raw dictionary,
// and a checkpoint identical to it is not resent (EncodingSame). Decoding
// is capped (Config.MaxCheckpointSize bounds both the declared length and
// the decoder's memory), so a decompression bomb is an error. Answers are
// limited by a bandwidth cap, absolute (Config.BandwidthBits) and as a
// fraction of the service's own traffic (Config.BandwidthFraction); over
// the cap a member answers negatively and the gatherer leaves it out.
//
// # Wire safety
//
// Every number and length from a peer is bounded before use: members
// (MaxMembers), recorded messages (MaxRecorded), checkpoint numbers
// (Config.CNWindow above the node's own and MaxCN, see above),
// checkpoint sizes (Config.MaxCheckpointSize). DecodeResponse checks the
// msgpack structure before decoding (node.CheckMsgpack), and is fuzzed
// (FuzzDecodeResponse) together with the capped decompressor.
//
// Errors are prefixed "snapshot:"; malformed protocol messages wrap
// ErrBadMessage.
package snapshot
