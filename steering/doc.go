// Package steering is crystalball's execution steering: the controller that
// turns predictions into action, event filters, and the immediate safety
// check (the CrystalBall paper, §3.3 and §4).
//
// # The controller
//
// A Controller belongs to one node. Each round starts from a neighbourhood
// snapshot the node gathered (package snapshot) and
//
//  1. removes the filters of the last round;
//  2. replays the error paths found in earlier rounds on the new snapshot
//     (timers, application calls and faults are replayed; messages are
//     taken only when the handlers regenerated one of the same type on the
//     same channel) and reinstalls at once the filter of each that still
//     fails;
//  3. explores from the snapshot with consequence prediction (package
//     consequence) within a budget of states, exhaustively in its first
//     Config.FullDepth levels (the round strategy, below);
//  4. ranks what it found by how likely each path is (Likelihood: the
//     faults it needs, the timers and calls it needs, the messages it
//     needs that were not yet in flight), and reports each violation with
//     its Rank; in mode Steer derives from each, likeliest first, the
//     event filter for the earliest event of its path that this node
//     can stop (the paper's Figure 2: n9 drops the Join from n13 that
//     starts the scenario, not the UpdateSibling that completes it),
//     explores again with the filters in place (the actor model then
//     drops or postpones the filtered events, as the runtime would),
//     and installs them only if that finds no violation — extending the set
//     with the filters a remaining violation suggests, a bounded number of
//     times, and otherwise checking each filter alone; the rest are counted
//     as unhelpful.
//
// # The round strategy
//
// Consequence prediction (the paper's Fig. 8) expands a node's local
// actions only in the first state where the node shows a given local
// state. That economy is what lets a round reach deep, and it is also
// what misses races of a node with itself: a timer that must fire again
// from a local state seen before (a retry racing the replies to its
// previous attempt, a periodic protocol's second period), or a local
// action that must run again after other nodes moved. A live round starts
// in the middle of such races. So a round's search is exhaustive — every
// local action of every node in every state — in its first
// Config.FullDepth levels, and Fig. 8 below: the near future is complete,
// the far future reaches deep. The rule and its price were chosen by
// measurement (docs/history/results-steering-rules.md, "The round strategy");
// consequence.TestFullDepthFindsRepeatedTimer pins a race Fig. 8 misses and
// the rule finds.
//
// Beyond the near future, Config.SafetyWalks adds random walks that check
// the safety properties at every step (consequence.SafetyWalks), half
// with the liveness walks' weights and half unweighted, each SafetyWalkDepth
// steps long: a walk takes every enabled action at every step however
// deep, so it reaches the races Fig. 8 prunes and the depth its state
// budget does not, at the cost of covering the space sparsely. A walk
// that reaches a violation becomes a prediction like the search's, its
// path cut and minimized the same way (TestSafetyWalksPredictWhatTheSearchPrunes).
// They are off by default; docs/history/results-mutation-corpus.md ("Rounds that see further")
// has what they and snapshot.Config.SecondHop, which widens a gather to
// the neighbours' neighbours, change on the zoo and the mutation corpus.
//
// After step 3 the round checks liveness (MaceMC, beyond it: from the live
// snapshot rather than an initial state): random walks from the snapshot
// against the liveness properties, within their own budget (Config.Walks
// and the fields after it), weighted so that faults and timers are rare,
// and each walk warming up before a live state counts. A walk that never
// reaches a live state is a suspect; the round searches its critical
// transition (consequence.FindCriticalTransition) and reports a dead end —
// a Prediction of Kind node.Liveness with its Critical: verdict C1, the
// critical step, the nearest live path — unless the dead end hinges on an
// injected fault or is open: a node involved in it deals with a node
// outside the snapshot (closed.go; LivenessOutcome). The walks explore the snapshot's model with silent
// resets made detectable as TCP makes them
// (consequence.Faults.StaleConnections). In mode Steer, the filter for the
// critical step — or the latest event of this node before it — is
// installed if walks with it in place reach live states
// (Config.LiveFraction) and it passes the safety check of filters.
// Every dead end is later confirmed or retracted on the node's later
// snapshots (LivenessWatch, Config.ConfirmGrace; Stats.DeadEndsConfirmed).
// The walks' weights are Config.WalkWeights, or with
// Config.AdaptiveWeights those of the rates of the node's own events
// (EventRates.WalkWeights); Config.GatherOnFault gathers right after a
// transport error, so a round sees the liveness window it opens.
//
// Between the two, a service whose state declares its environment
// (node.Environment: the nodes that may join through a member, with the
// calls they make) gets an environment search: consequence prediction
// again, from the snapshot with up to Config.Arrivals of the declared
// arrivals (default two, chosen by SnapshotArrivals: the gatherer's
// first), each a fresh node that has started and made its calls at the
// snapshot's time, with the configured resets but no connection breaks
// (a break multiplies every level's states; arrivals add depth). Two
// joins racing through one node — Chord's Figure 11, which the members
// alone can never show — are found there. Its predictions carry
// Prediction.Arrivals and are reported, not steered.
//
// A round explores Config.Faults along each path, the lasting ones —
// crash-stops, partitions, clock jumps — only as its node has seen the
// deployment show them (RoundFaults of the rates its layer accounts: a
// shell reports each lasting fault it sees, Layer.ObserveFault), with the
// downtimes, shapes, lengths and sizes seen: a kind never observed stays
// out of the rounds, so a deployment without lasting faults explores what
// it always did. Config.TimerSkew is the declared bound of the nodes'
// timer skew, which the rounds' models explore.
//
// The controller is a deterministic core: a round with budgets in states is
// a pure function of the controller's state and the snapshot, so the
// emulator charges it in virtual time from the states it explored and runs
// stay reproducible. The liveness walks draw from a seed that is a
// function of LivenessWalks.Seed, the node and the snapshot's fingerprint;
// each step counts as a state.
//
// # The layer, in both shells
//
// Layer is steering as a layer.Layer and layer.Gate, the same type in the
// emulator's and the live runtime's layer.Pipeline. Where and when its
// rounds run is the shell's, through the small Runner interface: a
// SyncRunner runs a round at once and charges it in virtual time (the
// emulator); the live shell's runner (live.RoundRunner) runs it on a
// goroutine with a wall-time budget (Config.MaxTime) and cancels it when a
// newer snapshot comes. What a finished, cancelled or failed round
// installs — the replayed paths' filters at once, the round's whole set
// when it ends, only the replayed ones for a round that did not finish —
// and the intervention budget are the Layer's and its Controller's, once
// for both shells. Verdicts are layer.Verdict values, the type the
// explorer's filters (consequence.ActorOptions.Intercept) return too. This
// package starts no goroutine and reads no clock.
//
// # Event filters
//
// A Filter is the paper's: for messages (type, source, destination) — the
// message is dropped and, unless its type is declared lossy, the
// connection to the sender is broken for both ends so their failure
// handling runs (Controller.filterBreaks; Config.BreakConnection breaks
// for lossy types too); for a timer or an
// application call, the handler's identity — the event is postponed, not
// dropped (by Config.PostponeDelay). Every event a path can hinge on at a
// node has one: a transport error about a peer is postponed too
// (FilterTransportError; the connection is already gone both ways, so
// postponing the node's failure handling is what a node can do), in the
// shells through layer.Verdict.RetryAt and in the explorer through
// consequence.ActorOptions.Intercept, which leaves the error at the head of
// its channel. Faults (resets, breaks, datagram losses) are the
// environment's, which no filter stops: a safety path gets the filter of
// this node's earliest event it can stop, a dead end that of the critical
// transition or this node's latest event before it (filterBefore).
// Controller.Gate and Intercept give the verdict on a live event.
//
// A round installs a new filter when exploring again with it in place
// finds no violation a filter could stop (the paper's check). A replayed
// path's filter that passed that check goes back in at once; one whose
// path was read back after a restart passes it again, on the world the
// node returns to, and also the liveness guard that judges holds and
// other nodes' requests: walks that take only what is under way, with
// the filter in place, must reach live states as often as
// Config.LiveFraction asks, unless they fail as often without it
// (keepLive; refusals in RoundReport.Starved and Stats.StarvingFilters).
// A round's fresh filters do not meet that guard: on the zoo's lock
// servers it refused the filters that stop a second grant.
//
// # The intervention budget and escalation
//
// Config.MaxInterventions bounds how often one kind of event is kept from
// the handler within Config.InterventionWindow, so that steering never
// keeps a node from healing. A kind whose budget is spent while a filter
// or the check still stops it is escalated, not let through: it is held
// (a message dropped, anything else postponed) until it is safe — a round
// on a snapshot completed after the escalation began installs no filter
// for it (until such a round the escalated filter stays in force beside a
// staler round's), or the immediate check on the newest view passes it —
// or until the hold itself threatens liveness: a round's liveness walks
// with the held kinds in place as filters fail to reach a live state
// they reach without them (the liveness guard; every hold is released,
// Stats.ReleasedForLiveness). There is no bound in time where the node's
// rounds walk against liveness properties; where none do (mode Off,
// walks off, a service without liveness properties) a hold lasts at most
// UnguardedFilterHold or UnguardedVetoHold, and
// Config.FilterHold and VetoHold bound it explicitly. A released kind
// runs for one window (overrides) before the budget counts again. Stats
// counts Escalations, Held and Released. A vetoed message of a type not
// declared lossy breaks its connection: TCP cannot lose a message on a
// connection that stays up, and the sender's failure handling must run.
//
// # The liveness budget
//
// Steering never costs liveness silently (liveness_budget.go). Every
// intervention — a filter hit, a veto, a postponement, a hold, a retry
// stopped again — charges the Layer's liveness budget: it judges the
// node's bounded properties (node.Within, by node.Obligation's rule and
// their own bound) and its plain liveness properties (as bounded ones,
// with Config.Liveness.DefaultBound, default DefaultLivenessBound) on the
// immediate check's view (Controller.CheckView; decoded from the newest
// snapshot only when judged, if the check is off) with the node's own
// current state overlaid, and charges each obligation open then or
// opening within its bound after it (a dropped request shows as a waiting
// client at the next gather). It judges again at the node's events,
// snapshots and ticks while an obligation is charged, a lift lasts or the
// last intervention is within the longest bound, and not at all
// otherwise. A charged obligation open past its bound means steering
// starved that property: at the first instant past the bound (the layer
// asks for a tick then) the node lifts its steering — the gate passes every event,
// the filters in force and the immediate check ignored, the rounds still
// running — until every obligation that lifted it has closed, and for at
// least Config.Liveness.MinLift (default DefaultMinLift), then resumes.
// A lift whose obligation is still open once it has lasted the
// property's bound expires: the property fails without steering too, so
// steering resumes and that obligation lifts nothing until it closes.
// LayerStatus.Lift, Lifts, LiftsExpired, LiftedSeconds and
// LiftsByProperty say so; the layer logs each lift (warn) and resumption
// (info). Time is the events' and ticks', so the rule is deterministic,
// and it is the Layer's, so both shells run it.
//
// # Steering requests
//
// A path's earliest event a filter can stop is often another node's (the
// holder of a lock predicts the server's second grant). In mode Steer the
// predicting node checks the filter at that node (Prediction.Remote) in
// its own model and sends the owner a Request — the filter, the path and
// its cut — on the service's connections; the owner admits it only from a
// neighbour, within RequestConfig's bounds, replays the path on its own
// newest view (after a fresh gather if the request's cut is newer), checks
// the filter as it checks its own (safety, the liveness walks) and
// installs it or refuses with a reason (Answer). A request is a filter at
// most, never an action, and the owner's budget applies to it as to its
// own filters (request.go).
//
// # Durable state and explanations
//
// The Layer is a layer.Durable: the filters in force whose prediction
// resets the node (Explanation.Reset), the held kinds of those filters,
// the stored error paths and the immediate check's view are made durable
// with each step and restored before a restarted node handles its first
// event, so a filter against what happens after a reset survives the
// reset it predicted, while a filter about the incarnation's own future
// dies with it; the rounds
// re-check what came back, but only a round whose snapshot holds a
// filter's peer may lift it — a restarted node's first rounds see only
// itself — so a filter on an unseen peer stays for Config.UnseenHold
// (unseen.go), and the node's gathers take in every peer its filters and
// holds are about, neighbour or not (snapshot.Layer.Include, include.go),
// so the next rounds see what the filter does to that peer. With
// Config.RecallView a restarted node's gathers also take in the nodes its
// restored check view holds, until a snapshot reaches each or finds it
// unreachable (include.go), and
// a kind released for liveness is not restored: the release was judged on
// the old incarnation's world. Every filter in force and every
// intervention carries the prediction it came from (Explanation: the
// source, the property, the path, its rank, the requester):
// LayerStatus.Reasons and Interventions, Intervention.Why.
//
// # The immediate safety check
//
// ImmediateCheck runs a handler on a copy of the node's state (the paper
// forks the process; a Go state copy costs microseconds) and evaluates the
// safety properties on the check's view (Controller.CheckView) with the
// node's new state: the newest snapshot's nodes and, within
// LayerConfig.ImmediateMemory (default Config.LastKnownFor), the nodes
// only earlier snapshots held, at their newest checkpoints — a property
// spanning a former neighbour is still checked. If a property that held
// would fail, the caller does not run the handler and treats the event as
// a filter would. With Config.ImmediateHop (ImmediateCheckHop) the check
// also delivers the event's messages to copies of their receivers' states
// in the view and judges the properties with the receivers' new states:
// a decision whose violation shows only at its receiver is vetoed at the
// node that makes it.
//
// The check judges with what the node knows now: a node of the view that
// has since sent this node a message stamped at or past its checkpoint
// there (Controller.Heard; the message being checked included) has moved
// on, and is left out of the judgement, so a lender's checkpoint taken
// before it gave a permit away does not veto the borrower's taking it. A
// veto is a fault the protocol already handles, per event kind: a message
// on a connection is dropped and the connection broken, and the shells
// (and the explorer's model of a filter) tell both ends' services, the
// vetoing node's too; a message type the service declares lossy
// (node.Delivery.Lost) and a datagram are dropped alone; a timer,
// application call or transport error is postponed.
//
// Before a risky event — a transport error, a message from a peer not
// heard from since its connection began — the check also looks ahead
// (Config.LookAhead, lookahead.go): a bounded breadth-first search from
// the check's view with this node's state after the event and the
// messages it sent in flight, against the same search without the event.
// A safety property that fails a few events later with the event and not
// without it vetoes the event, so an episode a transport error opens is
// stopped before the node's first step into it, where the rounds had no
// snapshot yet that held the error.
package steering
