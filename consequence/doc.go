// Package consequence is crystalball's explorer: a generic state-space
// search engine that runs a model of the distributed system along all its
// alternative futures and checks properties on every state it reaches. It
// implements the CrystalBall paper's two searches — exhaustive breadth-first
// search (Fig. 5, MaceMC's baseline) and consequence prediction (Fig. 8) —
// over any Model.
//
// # Models
//
// A Model[S, A] gives start states, the enabled actions of a state (each
// tagged with the node it belongs to and whether it is a local action — a
// timer, an application call, an internal choice — or a message delivery),
// the successor under an action, a 128-bit fingerprint of a state and of a
// node's local state. Models must be deterministic, must never modify a
// state once returned, and must be safe for concurrent use; the Model
// documentation states the contract in full. The actor system built from
// node.Services is the main model; package twophase (two-phase commit, after
// TwoPhase.tla) is a hand-written one that pins the engine to published
// state counts.
//
// # The actor model
//
// ActorModel is the model of a system of node.Services: a GlobalState holds
// the node states of the nodes in a snapshot (shared between global states,
// never modified: a transition clones the one node state it steps, with a
// pooled scratch node.Core), a FIFO channel per directed pair of the
// messages and transport errors in flight, a multiset per directed pair of
// the datagrams in flight, the open connections, the faults spent and a
// crash flag. Nodes outside the snapshot are one dummy
// sink: messages to them vanish. Its actions (ActorAction) deliver a
// channel's head, fire a scheduled timer when the virtual clock allows
// (advancing the node's clock to the deadline), run a pending application call (from a workload, or after a
// reset from node.Restarter) or one the service declares (node.AppCaller),
// and, within Faults, reset a node (silently or with RST), break a
// connection, drop a datagram or refuse a send. A panic in a handler yields a crashed state that the built-in
// "crash" property reports, with its path. The fingerprint is the XOR of
// the hashes of the components (each node, each non-empty channel and
// datagram multiset, the connections, the fault counters, the crash) mixed
// with their position; a
// transition updates only the components it changed, and a message's hash
// is computed once, when it is sent. Build the model from an initial
// configuration (NewActorModel), from checkpoints and in-flight envelopes
// (NewActorModelFromCheckpoints), with fresh nodes beside them that have
// just started and made their calls (NewActorModelWithFresh: the nodes a
// snapshot's environment says may arrive, node.Environment) or from a
// running emulator (NewActorModelFromLive); GlobalState is a node.View, so the services'
// properties apply through AdaptProperty (ActorModel.Properties).
//
// # Resets and connections
//
// Faults mean what they mean in the emulator (package emulation, whose
// connections follow TCP), and a test replays emulated runs with churn
// and breaks through the model step by step to keep it so
// (emulation/worldmodel_test.go). A reset loses the node's state, timers
// and pending calls, the messages to itself and the datagrams and
// transport errors in flight to it; what it had sent is still delivered.
// Its connections, one by one, with a peer p:
//
//   - opened by p, its first message not arrived yet: it carries on, and
//     its messages reach the new incarnation, accepted like a SYN (MaceMC's
//     RandTree bug needs exactly that: a JoinReply reaching a node that
//     reset after it asked) — unless the new incarnation writes to p
//     first, opening a connection of its own: then they are refused on
//     arrival and p gets a transport error;
//   - otherwise the messages in flight to the node are dropped, and p
//     holds a stale connection (GlobalState.Stale): its writes over it are
//     lost until it learns of the reset. With an RST (ActorAction.Silent
//     unset), a transport error reaches p after what the node had sent
//     it. A silent reset (the RST is lost) tells p only when a message p
//     had in flight arrives, or p next writes: both are answered by one
//     transport error, which messages the node sends meanwhile may
//     overtake.
//
// A write of the new incarnation to p replaces p's stale connection, as
// does any new connection. A break discards what is in flight on the
// connection both ways (not what older connections carry) and leaves both
// ends stale until their transport errors arrive. The connections of a
// start state are established.
//
// That is the model of resets with RST always, and of silent resets with
// Faults.StaleConnections. Without it a silent reset is cheaper and
// over-approximated: the peers' connections keep working with the new
// incarnation, which also receives what was in flight to the node, so the
// peers may never learn of the reset — no run does that. Steering rounds
// search safety with the over-approximation and walk liveness with the
// faithful model: from Figure 2's live state BFS needs about as many
// states either way (309 and 319 with the virtual clock), but a Chord
// round (10 nodes, from n6's snapshot, seed 1) needs 32,377 against
// 88,513 to reach the paper's Figure 10, past the round's budget (not for
// the fresh-connection marks, which cost nothing measurable: a silent
// reset's stale connections and the transport errors answering lost
// writes make the nodes' failure handling run in many more states).
// Faults.ResetKinds chooses the kinds of reset a search explores (both
// with ResetBoth; by default the one Faults.SilentResets names). So that
// equivalent states merge, the fingerprint holds which messages are the
// first of a connection only while a reset remains in the budget.
//
// # Lasting faults
//
// Resets restart a node at once and a broken connection is opened again
// at the next send; the lasting faults last (Faults.Crashes, Partitions,
// ClockJumps), and mean what the emulator's do (emulation.Emulator.Crash,
// PartitionGroups, CutOneWay, JumpClock; emulation/worldmodel_lasting_test.go
// replays emulated runs of them through the model step by step):
//
//   - A crash-stop (ActCrash) takes a node down silently: it takes no
//     action, leaves the state's node.View, and what was in flight to it is
//     lost, the messages answered by a transport error to their senders;
//     every peer's connection to it goes stale, and every write to it is
//     lost and answered by one transport error (the writer's writes are lost
//     until it arrives); datagrams to it are lost. It keeps its durable
//     projection (node.Durable) and its random source. Its restart
//     (ActRestart, a reset) is due Faults.Downtime of virtual time after the
//     crash, a timer of the down node's for the virtual clock, or never.
//   - A partition (ActPartition) cuts directed links, of the shapes
//     Faults.PartitionKinds names (CutIsolate, CutPartial — two nodes cut
//     apart while both reach the rest —, CutOneWay, CutSplit): connections
//     across a link cut both ways break, what is in flight over a cut link
//     is lost, every write over one is lost and answered by one transport
//     error (over a connection the other end opened a write breaks it: one
//     direction cannot carry a connection), datagrams over one are lost.
//     One is in place at a time; its heal (ActHeal) is due
//     Faults.PartitionLength after it, like a timer, or never.
//   - A clock jump (ActClockJump) moves a node's Env.Now forward or back by
//     Faults.ClockJump for good; its timers keep firing after the delays
//     they were set with (a monotonic clock's timers do), so the virtual
//     clock orders them as before.
//
// Timer skew is not a fault but a bound the user declares
// (ActorOptions.TimerSkew): each node's timers fire early or late by up to
// it, so the virtual clock lets a timer fire while another node's due up
// to twice the bound earlier is pending.
//
// What they leave lives in one part of the global state, nil until a
// lasting fault happens (lasting.go): a search without them keeps its
// states, fingerprints and costs exactly. With a budget, each is a local
// action and a fault of its node (a partition's: the node it isolates, the
// first end of its cut, the first node of a split's side; a heal the
// partition's), and the whole lasting state joins every node's local
// fingerprint once one happened. A state with lasting faults in it
// commutes nothing (partial-order reduction) and keeps its own
// fingerprint under symmetry reduction (exact, merging less). Reports name
// the kinds "crash", "restart", "partition", "heal" and "clock-jump".
//
// # Virtual clock
//
// Timers follow a virtual clock, after MODIST's: a node's clock moves only
// when one of its timers fires, to the timer's deadline (a deadline already
// past fires at the node's clock), so the timers its handler arms then get
// proper deadlines. Among one node's timers only those due first may fire;
// across nodes a timer may fire only if no timer of the snapshot is due
// more than ActorOptions.ClockSkew (DefaultClockSkew, 100 ms) before it.
// A lease that expires before another node's takeover is due is thus not
// reported broken, while a race within the skew is still explored.
// Message deliveries are not ordered by the clock: network delay is
// unbounded, so any message may arrive before or after any timer. The
// fingerprint holds every timer's due time and every node's clock relative
// to the earliest timer (states whose times are all shifted alike merge, and
// only they: node clocks set the deadlines of timers armed later, so two
// states that differ by one are different states), and a node's local fingerprint holds which of its timers may fire, so
// consequence prediction does not prune a timer as explored in a state
// where the clock held it back. ActorOptions.AnyOrderTimers restores the
// old rule (any timer, any time). A reset happens at the latest clock of
// the snapshot, so the new incarnation arms its timers from the time the
// run has reached; other events keep the node's clock, so that deadlines
// depend on the node's own firings only and states do not multiply by the
// order of other nodes' timers. Measured: from Figure 2's live state BFS
// needs 309 states instead of 809 and consequence prediction 108 instead
// of 48 (its local fingerprints now differ by the timers the clock
// allows); the offline Chord Figure 10 prediction 1,522 instead of 8,903.
// Node clocks joined the fingerprint with partial-order reduction (issue
// 17): leaving them out merged states that behave differently, which made
// a search depend on which of them it met first; the live-state BFS then
// needs 463 states, and searches of RandTree and Chord 1–5% more.
//
// # Bounded and history properties
//
// For a spec that declares a bounded property (node.Within) or a history
// property (node.OnHistory), and only then, a global state also holds
// what its path observed: each bounded property's node.Obligation (the
// emulator's rule, judged on every successor at the state's clock, the
// latest node clock) and the path's client history (node.Invoke,
// node.Respond), as one more fingerprint component (obligation times
// relative to the clock's reference, the history as a running hash of its
// events' kinds, nodes, operations and results). AdaptProperty makes
// either a safety property: a bounded one fails in a state its
// obligation reached past its bound (node.OverdueError), a history one
// where the path's history fails its check (memoized by the history's
// hash: most steps add no event). Three rules keep it meaningful and
// exact. Messages in flight carry their send times and a timer may not
// fire past a deliverable message's send time plus
// TimelyOptions.MaxDelay (transport errors too): without a bound on
// network delay every bounded property fails along a path that holds a
// message while timers fire (the zoo follower's corrected twin, at depth
// 13). Such a model commutes nothing (the order of two steps shows in the
// history and in when an obligation opened) and does not pack its levels
// (what a path observed is not an interned part). A model built from a
// snapshot starts each obligation at the snapshot (what held before is
// unknown, so an outage is found no earlier than a bound after it) and
// its history with the operations its nodes have under way
// (node.Client). A spec that declares neither keeps its states,
// fingerprints and state counts; symmetry reduction is refused with
// them (ErrNoSymmetry).
//
// # Datagrams
//
// A datagram (node.Env.SendDatagram) joins the multiset of its directed
// pair; it opens no connection. Any datagram of a multiset may be delivered
// next (ActDeliverDatagram, one action per distinct message: equal
// datagrams, by message hash, are one action with one successor), so
// datagrams between the same pair may arrive in every order. Within
// Faults.Drops, ActDropDatagram loses one for good; it is a local action
// of the receiver. A multiset is kept sorted by message hash and hashed in
// that order, so its contribution to the fingerprint does not depend on
// the order its datagrams were sent or listed in, and the update stays
// incremental. A reset of the receiver, silent or not, loses the
// datagrams in flight to it (as in the emulator); a break leaves datagrams
// alone; a filter's verdict with Break drops a datagram without breaking
// anything. Datagrams to nodes outside the snapshot go to the dummy sink.
// Start states take datagrams as envelopes with node.Envelope.Datagram set
// (emulation.Emulator.InFlight lists its datagrams in flight so), in any
// order. Reports name the kinds "deliver-datagram" and "drop-datagram".
//
// # Declared delivery
//
// A service may declare that its messages, or some types of them, travel
// unreliably (node.Spec.Delivery, node.Delivery). Such a message travels on
// its FIFO channel like any other, and the explorer may also act on it
// where it sits: lose it (ActLose, within Faults.Losses), copy it to the
// channel's tail (ActDuplicate, within Faults.Duplicates: the copy arrives
// after what was sent before it was made, and any time while the original
// is in flight), or deliver it ahead of the messages before it
// (ActDeliverAhead, within Faults.Reorders), when it and each of them may
// be reordered and each was overtaken fewer times than its declared bound
// (a count kept on the channel item and hashed with it). The first
// message of a connection (a SYN mark), a message in a refusal window,
// transport errors and messages to self are never acted on. The actions
// are network events, expanded in every state as deliveries are, after
// every other action; they never commute (partial-order reduction leaves
// them alone). A model of a service that declares nothing, or with the
// three budgets zero, has no such action, no counter and no hash of them:
// its states, counts and fingerprints are unchanged. Reports name the
// kinds "lose", "duplicate" and "deliver-ahead", with the message's
// position in its channel.
//
// # Late messages
//
// A model with a bounded property delivers every message within the delay
// bound its properties assume (TimelyOptions); a bug that needs a message
// later than that is out of its reach. Within Faults.Delays, ActDelay
// makes a channel's head late, any message, declared or not: neither it
// nor what waits behind it holds the virtual clock back until it is
// delivered, as on a stalled connection. A path that spent a delay is
// judged by the safety and history properties only: its bounded ones
// assume the bound it broke. Reports name the kind "delay".
//
// # Refused sends
//
// A message sent with node.Env.TrySend may be refused by the transport
// (node's package documentation, "Refused sends"); the explorer treats a
// refusal as a fault, within Faults.Refusals. A node's refusal window is
// what its latest step sent with TrySend to other nodes and is still in
// its channel (no shell refuses a message to the sender itself): a
// shell refuses a send only before the sender's next event, and a message
// not yet delivered might as well never have left. ActRefuse (one action
// per distinct message of a window) removes the message from its
// channel, the messages behind it staying in order, and steps the sender
// with node.EventSendRefused; it is a local action of the sender. Any other
// step of the node replaces its window; a refusal's step keeps the part
// sent after the refused message, ahead of what its handler sends, since a
// shell reports one step's refusals in the order the messages were sent
// and before any other event. A window is part of the state's identity —
// a message in one hashes differently in its channel, by its position in
// the window — and, with a refusal
// budget, of the sender's local fingerprint, so consequence prediction
// expands a refusal whenever the sender has a new message to refuse. When
// the budget is spent every window is forgotten, so states that differ
// only in what might have been refused merge. Nothing is marked without a
// budget, and a service that never calls TrySend explores the same states
// with one. The start state of NewActorModel holds the windows of the
// nodes' Init; a snapshot's messages in flight were accepted by their
// transport and are never refused. Reports name the kind "refuse-send".
//
// # Running a search
//
//	m, _ := twophase.New(twophase.Options{RMs: 5})
//	res, err := consequence.NewChecker(m).
//		Properties(m.Properties()...).
//		Strategy(consequence.BFS). // or consequence.Consequence
//		MaxStates(10_000_000).MaxTime(30 * time.Second).
//		Run(ctx)
//	// res.Unique == 8832, res.Stop == consequence.StopCompleted
//	for _, v := range res.Violations {
//		fmt.Println(v.Property, v.Depth, v.Path) // v.Path replays with Replay
//	}
//
// Properties are named predicates over states: Always (safety: checked on
// every unique state) and Eventually (liveness: the exhaustive searches
// report a quiescent state — one no enabled action leaves — that violates
// it, since nothing can repair it; random-walk liveness search is separate).
//
// # Strategies
//
// BFS explores every reachable state, level by level, detecting duplicates
// by fingerprint. Consequence explores the same way but expands the local
// actions of node n only in the first state, in BFS order, in which n has a
// given local state (the set localExplored of (n, local fingerprint));
// message deliveries are always expanded. It therefore follows every chain
// of consequences — a node whose state changed gets all its actions again —
// while skipping the interleavings of independent local decisions, and
// reaches much deeper in the same budget. The price is completeness: a
// violation that needs a node's local action in a combination of other
// nodes' states other than the first one met is missed. From a 25-node
// RandTree state, BFS finds RootHasNoSiblings at depth 5 through a reset of
// n1 after other nodes moved, which consequence prediction pruned because
// it had already reset n1 (in its unchanged local state) earlier in BFS
// order. Consequence prediction is for reaching deep from live states;
// BFS is the complete baseline. Options.FullDepth joins them: the first
// FullDepth levels are expanded as BFS does (every local action of every
// state), the rest as Fig. 8 — a timer that must fire twice from the same
// local state is then found if its second firing is near the start, as
// it is in a live snapshot taken mid-race.
//
// A fault is a local action too: a reset of its node, a break of either
// end, a datagram drop of the receiver, a refused send of the sender. So
// that the rule does not prune a fault whose target appeared after the
// node's local state did, the local fingerprint covers what enables the
// fault: the fault budget spent always, the connections when breaks are
// enabled, when drops are enabled the drops spent and the datagrams in
// flight to the node, and when refusals are enabled the node's refusal
// window and the refusals spent. A drop is thus expanded whenever the
// receiver or its incoming datagrams change — and so are the receiver's
// timers and calls, the price of keeping drops. The
// local fingerprint also covers the stale connections the node holds: a
// write over one is lost, so once a transport error tells the node of its
// peer's reset — even one its handler ignores — its local actions are
// explored again (Paxos's Figure 13 needs B to propose after A's RST
// reaches it).
//
// # Partial-order reduction
//
// Two messages delivered to two different nodes commute: either order
// reaches the same global state. BFS of a model that implements Commuter
// (the actor model and twophase do) uses sleep sets (Godefroid): after
// taking action b in state u, an action x that u took before b, or that
// was asleep in u, and that commutes with b is asleep in u·b — its
// successor u·b·x is u·x·b, which the expansion of u·x reaches. A state
// reached at its depth by several paths sleeps only what every path put
// to sleep (the sets are intersected, one index per shard group). Every
// reachable state is still visited at its BFS depth, so unique states,
// depth counts and violations are those of the search without reduction,
// and safety over states stays sound; only the transitions taken shrink
// (Result.Slept counts the skipped ones). The liveness check of quiescent
// states tries a state's sleeping actions before calling it quiescent.
// Options.DisablePOR (check --por=false) turns it off; consequence
// prediction and random walks never use it. A model that implements
// KeyedCommuter (twophase does) names its transitions by keys below 64
// and gives the independent ones as a mask: sleep sets are then sets of
// keys, and a successor's is one AND, where a Commuter's needs the
// successor's Actions list searched for each candidate (on 2PC that was
// most of the reduction's cost). Sleep sets are weighed once, after
// 65,536 transitions: a search that slept fewer transitions than half the
// successors whose actions it listed for them goes on without them
// (Result.SleepSetsOff; the actor model on Chord and Paxos, whose
// listings cost about what a slept transition saves); the states, depths
// and violations are the same either way. Sleep sets alone never
// remove a state: reductions that do (persistent or stubborn sets) skip
// intermediate states of commuting steps, which is sound only for
// properties that cannot see them, and the properties here are arbitrary
// predicates over the whole global state.
//
// The actor model declares independent the deliveries, timers and queued
// calls of two different nodes whose connection is settled (see
// ActorModel.Commute), never faults or transport errors. It relies on the
// fingerprint being exact: a fingerprint that merged states behaving
// differently (the model's AnyOrderTimers does, and then nothing
// commutes) would let a sleeping action's successor be reached only from
// a merged twin, and so be missed. Measured: 1.48x fewer transitions for
// RandTree (5 nodes, 8 levels) and 1.41x for Chord (5 nodes, 7 levels),
// 4.3x for 2PC-7; see docs/PERFORMANCE.md.
//
// # Liveness
//
// RandomWalks is MaceMC's liveness search: random walks of up to DMax
// steps (actions drawn by an optional per-action weight, each walk from
// its own seeded stream) from the start states; a walk that never reaches
// a state where every Eventually property holds is a suspected violation.
// As in MaceMC, walks also start where a bounded search left off: a search
// with Options.Periphery returns states of its deepest level with their
// paths (Result.Periphery), and RandomWalksFrom walks from them; a suspect
// then carries the whole path from the start state.
// FindCriticalTransition probes states along the suspect path with K walks
// each — the end (not dead: C2, raise DMax), then exponentially farther
// back, then by binary search — and returns the critical transition (C1)
// with the nearest live path. FindLivenessViolation chains them to a
// verdict: it searches each suspect's critical transition as the walks find
// it and passes over suspects judged C2 (under faults the first suspect is
// often slow convergence, and a real violation comes later) until a C1 or
// LivenessOptions.MaxSuspects of them. All are pure functions of their
// inputs and run on the calling goroutine.
//
// # Symmetry reduction
//
// When a system does not tell some of its nodes apart — two-phase commit's
// resource managers, Paxos's acceptors that do not propose — renaming them
// maps reachable states to reachable states, and the search needs only one
// state per orbit (the states equal up to such a renaming). The engine
// needs no change for it: a model with symmetry returns from Fingerprint
// the fingerprint of a canonical member of the state's orbit, while the
// state it stores, its actions and the violation paths stay the real ones
// (a path is rebuilt by replaying actions from the start and comparing
// Fingerprint, which is consistent). The canonical form is found by
// sorting, not by trying the n! renamings: twophase.Options.Symmetry counts
// the RMs' 4-bit parts (an exact canonical form: the search keeps exactly
// twophase.OrbitCount states, 3,300 of 2PC-10's 61.5 million); for the
// actor model (ActorOptions.Symmetry, ActorModel.WithSymmetry) the service
// declares groups of interchangeable nodes (node.Symmetric) and renames the
// IDs in its states and messages (node.RenamingService,
// node.RenamingMessage). The members of each group are sorted by a
// signature — the node's state, calls and timers with every member renamed
// to a placeholder, and its channels, datagrams and connections with the
// other end's placeholder — and take the group's IDs in that order; the
// fingerprint is that of the renamed state, computed component by
// component. Members with equal signatures may still differ in how others
// refer to them (a node outside the group pointing at one of them): the
// fingerprint is then the least over the orders of the tied members, up to
// 6 orders; past that the tied members keep their ID order, and the form
// is one of several for the orbit: the search then keeps more than one
// state of the orbit (fewer merges), never merges two orbits.
//
// What the user declares, and what it costs if wrong: the nodes of a group
// are interchangeable — the service compares their IDs for equality only
// (no ordering, no ID-derived values), their random sources do not matter
// (the reduction ignores them; the explorer seeds them by ID), and the
// calls a reset node gets (ActorOptions.Workload) treat them alike. The
// start state need not be symmetric: every state the search keeps is
// reached by a real path, and what follows a state follows, renamed, any
// state of its orbit; an asymmetric start only merges less. Under that
// declaration the
// reduction is sound for safety properties that are themselves symmetric
// (invariant under renaming the group; "n2 never learns" is not): a state
// violates such a property exactly when every member of its orbit does,
// and a violation's depth is its orbit's, so BFS reports the same
// properties at the same depths (tests pin this for 2PC and Paxos). A
// wrong declaration merges states that are not equivalent and may hide
// violations; the explorer cannot detect it.
//
// Liveness. The exhaustive strategies check a liveness property only in
// quiescent states, where every successor has the state's fingerprint.
// Under symmetry that means every successor is in the state's orbit; by the
// symmetry the same holds for every member of the orbit, so the system can
// never leave it, and a symmetric property failing there fails forever: the
// verdict is still certain. It can find more than the search without
// symmetry: a livelock that only renames the members (a node re-pointing
// from one member to another forever) is a cycle of distinct states
// without symmetry, never quiescent, and a quiescent orbit with it. Random walks (RandomWalks, the MaceMC liveness
// search) and critical-transition search do not use the visited set, so
// symmetry changes nothing there. This is where we differ from TLC, whose
// symmetry is unsound for temporal properties (a known TLC limitation): TLC checks
// liveness on the graph of orbits, where a cycle of orbits need not be a
// cycle of states — it may be a path that ends in a renaming of its start
// — and fairness and properties naming processes are not preserved by the
// quotient. We never look for cycles in the reduced graph; a quiescent
// orbit is a real dead end.
//
// With partial-order reduction: sleep sets are kept per fingerprint, so
// under symmetry a state's sleep set comes from the paths to any state of
// its orbit, intersected as positions in the stored state's Actions list —
// a subset of the stored path's own set, which is sound for it; the
// argument that a skipped action's successor is reached elsewhere carries
// over renamed, since both models' independence (Commute) is by node and
// so invariant under renaming. The tests pin the same orbit counts, per
// depth, and the same violations with both reductions on as with symmetry
// alone.
//
// Cost: the 2PC canonical fingerprint is a loop of a few instructions per
// RM (17 ns against 4 ns per state). The actor model's renames and
// re-encodes the states and messages that hold members' IDs (about 11 µs
// per state on 5-member Paxos, against the 5 µs it takes to generate one),
// so it pays off when orbits are large: Paxos with 4 symmetric acceptors
// keeps 5.6 times fewer states to depth 8 and takes about 0.7 times the
// time.
//
// # Budgets, cancellation and results
//
// Options (or the Checker's setters) bound a search by unique states
// (MaxStates), depth (MaxDepth) and wall time (MaxTime, read from an
// injectable Clock); a canceled context stops it too. The Result reports
// why the search stopped, the states generated and unique, the states found
// at each depth, the deepest depth, consequence prediction's pruned actions,
// the violations (property, depth, start state, action path, state), the
// elapsed time and the memory of the visited set per state. Options.Progress
// sees the same counters after every level, for progress lines.
//
// # Parallelism and determinism
//
// The search is level-synchronous. Each level's frontier is split into
// chunks that Options.Workers goroutines (default GOMAXPROCS) expand in
// parallel; the visited set is sharded and each worker inserts the
// successors of its own shards, walking the chunks in frontier order, so the
// first successor in BFS order always wins. Unique states, per-depth counts,
// counts of generated and pruned states and violations with their paths are
// therefore identical for any number of workers and any schedule, and equal
// to those of the paper's sequential algorithms — including where a state
// budget cuts the search off. Every goroutine has exited when Run returns.
//
// # Memory
//
// The visited set keeps 64-bit keys, eight to a 64-byte bucket, in 1,024
// shards chosen by a fingerprint's top 10 bits (64 for searches of at most
// a million states), which need not be stored: it tells 74 bits of each
// fingerprint apart, and Result.OmissionProbability estimates the chance
// that it confused two states (1e-7 at 61.5 million). Tables grow by 1.5x
// over sizes that are not powers of two: 9.1-15.4 bytes per state (the
// paper: 150). Violation paths are rebuilt from parent links — the
// parent's position in its level and the action's in its Actions list,
// one 4-byte word when both fit, else 6 bytes — by replaying the model,
// which also checks its determinism. Only two levels are alive at a time.
// A model that does not pack keeps its states there as they are, without
// fingerprints (Model.Fingerprint is asked again); a PackingModel's levels
// are words in a search of more than 100,000 states (or without a state
// budget; smaller ones, such as steering's rounds, fit as states): the actor model interns node states, channels, datagram sets
// and connection sets once per search (content-keyed, append-only tables)
// and a level entry names them by 32-bit handles, about 50 bytes where a
// global state took about a kilobyte. Options.MaxMemory stops a search
// before the process outgrows a budget. At 2PC-10 (61.5 million states)
// the search peaks at 1.41 GB of RSS with the CLI's collector setting,
// and Chord's BFS at about 200 bytes per state; docs/PERFORMANCE.md
// ("Scaling") has the curve and where the memory goes.
//
// # Performance
//
// See docs/PERFORMANCE.md at the repository root for the numbers and the commands that
// produce them. On two-phase commit with 7–8 resource managers one core
// explores 4–5 million unique states per second (3–6 times SPIN's rate on
// the same specification); the time goes to the visited-set inserts (cache
// misses into a table of tens of megabytes), which the engine overlaps by
// touching the home buckets of the successors of several states before
// inserting them.
package consequence
