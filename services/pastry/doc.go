// Package pastry is Pastry (Rowstron and Druschel, Middleware 2001):
// prefix routing with leaf sets, as far as MaceMC's Pastry bug needs it —
// join through a bootstrap, leaf-set maintenance and failure detection —
// written against node.Service, with the bug and an option that corrects
// it. A service that cannot reproduce the bug cannot show that the
// checker finds it.
//
// # The protocol
//
// A node's identifier is a pure function of its node.ID (Options.Placement:
// hashed by default, or the ID itself so that scripts can lay nodes out),
// in a space of 2^Options.Bits identifiers read as Bits/DigitBits digits of
// base 2^DigitBits (default 16 bits: 8 base-4 digits), so messages carry
// node IDs only. Each node keeps a leaf set — the LeafSize/2 numerically
// nearest known nodes on each side (Left counter-clockwise, Right
// clockwise; on a small ring a node can be on both sides) — and a routing
// table whose row r, column c holds a node sharing r leading digits with
// it whose next digit is c.
//
// The application starts a node with the JoinOverlay call naming a
// bootstrap; a node whose bootstrap is itself forms an overlay of its own.
// The joiner X sends Join(X) to the bootstrap, retrying on the "join"
// timer. A joined node routes the Join toward X's identifier: within its
// leaf set's range to the numerically closest of its leaves and itself;
// otherwise to the table entry sharing one more digit with X; otherwise
// (Pastry's rare case) to any known node sharing as long a prefix and
// numerically closer. Each hop adds itself and its table row for X to the
// Join (as FreePastry's JoinRequest collects rows), and the closest node Z
// answers X with a JoinReply carrying its leaf set. X builds its leaf set
// and table from them, becomes joined and sends an Announce (with its leaf
// set) to every node it knows; a joined node that receives one takes the
// sender in and replies with its own leaf set (LeafSet). A node takes
// another into its routing state only on that node's own word (its
// Announce or LeafSet; or, once, the JoinReply): of a node it merely
// hears of — in another node's list, or probing it — it asks, with an
// Announce, so that a dead node named in a stale list does not come back.
// A node that is not joined cannot route: it drops the Joins it receives.
//
// The "probe" timer (Options.ProbeInterval) probes every known node; the
// Probe carries the prober's leaf set (Pastry's periodic leaf-set
// exchange, which makes nodes that joined next to each other at once learn
// of each other). A node that left Options.MissLimit probes in a row
// unanswered is purged at the next round — from the leaf set, the table
// and the probe counts — and a side that lost a node is repaired by asking
// the farthest remaining leaf on that side for its leaf set. A node that
// does not know its bootstrap (it was purged while down, or a restarted
// bootstrap formed an overlay of its own) announces itself to it every
// round, which merges the overlays back. After a reset a node is in
// StatusInit with nothing; node.Restarter gives the JoinOverlay call that
// rejoins it — with the same identifier.
//
// # Transport
//
// Every Pastry message is a datagram (node.Env.SendDatagram): Pastry does
// its own failure detection, by probes, and MacePastry and FreePastry send
// their liveness checks over UDP. This choice is what makes the bug
// reachable: over TCP a reset with RST gives every peer a transport error,
// the peers purge the node at once, and its rejoin succeeds. With
// datagrams a reset is invisible to the peers but for the failure
// detector, in the explorer (both reset kinds) as in emulation.
//
// # MaceMC's bug
//
// DefaultOptions has the bug: "a node attempting to rejoin a Pastry ring
// using the same identifier was unable to join because its join messages
// were forwarded to unjoined nodes" (MaceMC §1; FreePastry 1.4.3's changelog
// has "Dropped JoinRequest on rapid rejoin problem — ... Didn't find the
// cause of this bug, but can no longer reproduce."). X resets and rejoins
// with the same identifier before the other nodes purged its old entry.
// To them X's old entry is the node numerically closest to X's identifier,
// so X's Join is routed to X — the new, unjoined X — which drops it. The
// new X answers probes (a started node answers them whether or not it has
// joined, as a transport-level ping is answered), so the old entry is
// never purged, and every retry ends the same way: X never joins. The
// stale entry can also come back after the rejoin: the old incarnation's
// Announce, still in flight, inserts it (the critical transition the
// checker reports in cli's pinned reproduction).
//
// The correction (Options.FixRapidRejoin, "rapid-rejoin"): a node never
// routes a Join to its joiner, and drops the joiner's entry when it
// handles the joiner's Join — a node asking to join is not a member,
// whatever an older incarnation was. (We do not know what FreePastry
// changed; its log says the problem stopped reproducing.)
//
// # What checking and emulation show
//
// `crystalball check --service pastry --nodes 3 --strategy walk --budget 0
// --resets 1 --walks 100 --dinit 300 --dmax 1000 --weights
// timer=0.02,reset=0.05 --seed 1` reports verdict C1 with the critical
// transition "n1 deliver-datagram pastry.Announce from n2" (step 10): n2
// joined, reset and rejoined before n1 heard its old Announce; that
// delivery puts n2's stale entry into n1's leaf set, after which n1 routes
// n2's Joins to n2 itself. Other seeds report the reset itself (every
// node already knew X) or a ProbeReply from the new X that clears a miss
// count about to purge the old entry. With --fix all the same walks find
// no suspect. Timers must weigh less than deliveries (MaceMC §4.3): with
// unbiased walks the probe timer fires again and again before a reply is
// delivered, the live new X is purged, and the walks escape.
//
// MaceMC's prefix-based search — walks from a live steady state, the
// formed overlay of rapid-rejoin.txt, with one reset — finds the reset
// itself critical (explore_test.go): with timers rare the restart call
// comes long before the others' failure detectors could purge X.
//
// In emulation (10 nodes, churn 2/min for 10 minutes), with a mean
// downtime of 1s the bug leaves 2 to 8 nodes joining forever in each of
// seeds 1-10; with the correction, or with the default 30s downtime (the
// old entries are purged before the rejoin), all nodes join and the leaf
// sets are consistent in every seed.
//
// # Properties
//
// SafetyProperties are LeafSetWellFormed and RoutingTableWellFormed;
// LivenessProperties are AllJoined and LeafSetsConsistent (every joined
// node's leaf set is exactly the nearest joined nodes of the view on each
// side: all nodes form one ring). Each check reads only the nodes in the
// node.View it is given (leaves outside a partial view are not judged) and
// allocates nothing while the property holds. Summarize reduces a view to
// joined / consistent / stale-entry counts.
//
// # Usage
//
//	spec := pastry.NewSpec(pastry.DefaultOptions()) // or AllFixes()
//	core, _ := node.NewCore(node.CoreConfig{ID: 3, Factory: spec.New})
//	core.Step(node.Event{Kind: node.EventInit, At: now})
//	fx, _ := core.Step(node.Event{Kind: node.EventApp, At: now,
//		Msg: pastry.JoinOverlay{Bootstrap: 1}})
//	// carry out fx.Sends (datagrams) and fx.Timers; after a reset, issue
//	// JoinOverlay again.
//
// The scenarios are replayed step by step in testdata/*.txt: a plain join
// (join.txt), the rapid rejoin with the bug (rapid-rejoin.txt) and with
// the correction (rapid-rejoin-fixed.txt).
package pastry
