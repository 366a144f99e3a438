// Package bullet is Bullet′, the file distribution system of the
// CrystalBall paper (§5.2.3, §5.5), written against node.Service the way the
// paper describes the Mace implementation — including the behaviour behind
// the paper's bug, with an option that applies its correction.
//
// # The protocol
//
// A file of Options.Blocks blocks of Options.BlockSize bytes is served by a
// source. The application starts a node with the Download call naming the
// source; the source itself starts with the whole file. The source pushes
// the file, one block per PushInterval, round-robin to a subset of the
// nodes (the first PushFanout to join); every other block is discovered
// and retrieved by explicit requests.
//
// Discovery. The paper's Bullet′ learns peers through RanSub over RandTree.
// Here every node joins through the source (Join), which keeps the member
// list and answers each Join, the first and one every DiscoverInterval,
// with a Sample: a random subset of SampleSize members. That gives the
// mesh what RanSub gives it — a random, changing set of candidate peers —
// without a second overlay in every state the explorer copies; embedding
// services/randtree would mean forwarding its messages, timers and
// application calls through this service and doubling the state, for no
// behaviour the bug or the download depend on.
//
// Peering. Every PeerInterval a node that is still downloading and has
// fewer than MaxSenders senders asks a random known peer to become one
// (PeerRequest); the peer accepts (PeerAccept) while it serves fewer than
// MaxReceivers receivers, else rejects. The paper peers "with the senders
// that have the most disjoint data": when a node has MaxSenders senders,
// the peering timer drops (Unpeer) one that announced no block the node
// lacks and has no request outstanding, making room for another, so the
// senders kept are those with the most disjoint data. A complete node
// drops all its senders. A Request from a node that is not a receiver is
// answered with Disown (the sender reset or dropped it); a transport error
// drops both links with the peer.
//
// File maps. Every node keeps a file map (Have), a bitmap of the blocks it
// has; the block's data is never kept. A sender keeps, for each receiver, a
// "shadow" file map: the blocks it has and has not told that receiver
// about. It starts as the sender's whole map when the receiver is
// accepted, and every block the sender gets is added to every shadow.
// Every DiffInterval the sender turns each non-empty shadow into a Diff
// (the blocks new relative to the last diff), sent with node.Env.TrySend,
// and clears it. A receiver keeps a view of each sender's file map, the
// union of its diffs.
//
// Requests. A receiver keeps up to MaxOutstanding Requests outstanding at
// each sender, each for a block the sender announced and the receiver
// neither has nor has asked anyone for: rarest-random, the block the
// fewest of its senders announce, from a random starting block. The
// sender answers with the Block, whose payload makes it cost its size on
// the wire (the nodes of a spec share one immutable zero slice).
//
// # The paper's bug
//
// "Senders and receivers communicate over non-blocking TCP sockets ...
// This transport queues data on top of the TCP socket buffer, and refuses
// new data when its buffer is full." When the transport refuses a Diff
// (node.SendRefusedHandler), the paper's code clears the receiver's shadow
// file map: the sender never tells the receiver about the blocks of that
// diff, and the receiver, which cannot request a block it does not know
// of, may never complete or skews its rarest-random choices. The
// correction (Options.FixKeepShadow, EnableFix "keep-shadow") puts the
// refused diff's blocks back in the shadow; the next diff timer sends them
// (never a TrySend from the refusal handler, whose queue is still full).
// testdata/refused-diff.txt and refused-diff-fixed.txt replay both step by
// step.
//
// A pushed Block is sent with TrySend too, so that the source does not
// queue the file without bound behind a slow uplink: a refused push is
// pushed again at the next push timer.
//
// # Properties
//
// FileMapViewConsistent (safety) is the paper's "sender's file map and
// receivers view of it should be identical", up to what is in flight.
// node.View exposes node states, not channels, so a sender keeps, per
// receiver, what the transport accepted of its diffs (ReceiverLink.Told, a
// ghost of the receiver's view) and both ends count the diffs
// (ReceiverLink.Sent, SenderLink.Received). Every block of S's file map
// must be announced to R (Told) or in S's shadow for R; and when R has
// received every diff S's transport accepted, R's view must be exactly
// Told. The paper's code violates the first half at the very refusal of a
// diff, on the sender's state alone; the correction never. AllBlocks (liveness): every node has every block. Each
// check reads only the nodes in the node.View it is given, so it works on
// a partial neighbourhood snapshot, and allocates nothing while the
// property holds. Summarize reduces a view to download statistics for
// progress lines and reports.
//
// # State encoding
//
// The state is a msgpack array; ID sets and links are ascending by ID and
// file maps are []uint64 bitmaps, so its encoding is canonical without map
// sorting. A node with the default 1280 blocks, six senders and six
// receivers checkpoints in about 2.7 kB uncompressed (bench_test.go). State implements
// node.Cloner and node.Neighborer (its senders and receivers).
//
// # Usage
//
//	spec := bullet.NewSpec(bullet.DefaultOptions()) // or AllFixes()
//	core, _ := node.NewCore(node.CoreConfig{ID: 13, Factory: spec.New})
//	core.Step(node.Event{Kind: node.EventInit, At: now})
//	fx, _ := core.Step(node.Event{Kind: node.EventApp, At: now,
//		Msg: bullet.Download{Source: 1}})
//	// carry out fx.Sends and fx.Timers; after a reset, issue Download again.
package bullet
