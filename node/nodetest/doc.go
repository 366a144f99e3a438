// Package nodetest is a scripted, deterministic test harness for
// node.Service implementations, in the style of etcd raft's rafttest
// interaction tests. It is a test-support package: any package's tests may
// import it; production code must not.
//
// A Harness drives a handful of node.Cores by hand. Each command of a
// cockroachdb/datadriven script is one event at one node (or one fault), and
// the command's output is what the nodes did in response, so a script reads
// as a step-by-step trace of a scenario and its expected outcome. Nothing
// happens unless a command says so: messages wait in their channel until
// delivered, timers until fired. Walk runs script files; Harness.Exec runs
// one line from Go (see the package example); ReplayUntil replays a script
// up to one of its commands and hands the harness over, for a test that
// goes on from the middle of a scenario (the services build their
// explorer's models from such states).
//
// Conformance is the package's other half: one call that holds any
// service to the contracts every runtime relies on (clone independence,
// checkpoint round trip, hash coverage, message registration) on the
// states a seeded random run of its handlers reaches. Every service of
// the module runs it.
//
// # Model
//
// Channels are per directed pair of nodes and FIFO, like the TCP connections
// Mace and the live runtime use. A pair has a connection once either node has
// sent to the other. The clock starts at a fixed instant and advances by one
// millisecond per event, so timer deadlines print as durations and scripts
// are byte-for-byte reproducible.
//
// A datagram (node.Env.SendDatagram) is queued on the same FIFO channel as
// the sender's messages — one valid best-effort delivery, and drop loses
// it — and prints as "FROM ~> TO MSG" when sent. It opens no connection.
// A script reorders datagrams by naming one's position in its channel
// (deliver TO FROM N): a datagram may overtake anything queued before it,
// a message only datagrams.
//
// A message sent with node.Env.TrySend prints as "FROM ?> TO MSG" and is a
// message like any other until the script refuses it (refuse TO FROM N),
// as a transport with a full send queue would: it leaves the channel
// undelivered and the sender runs node.EventSendRefused (its
// SendRefusedHandler). The contract runs a refusal before any other event
// of the sender, so only a message of the sender's latest event (other
// than refusals) can be refused; the harness keeps Envelope.Refusable on
// what Pending returns.
//
// Resets come in the two flavours MaceMC and CrystalBall distinguish. A
// silent reset (the RST is lost) restarts the node and leaves every channel
// alone, so messages already on their way reach the new incarnation. A reset
// with RST breaks every connection the node had: the messages queued on them
// in both directions are lost, and every started peer the node had a
// connection with gets a transport error.
//
// # Script language
//
// Node IDs are written as node.ParseID reads them (n9 or 9) and printed as
// n9. Commands:
//
//	options [seed=N] [ARG...]
//	    Before the first start or check. seed=N seeds every node's random
//	    source (default Config.Seed); the other arguments go to
//	    Config.Options, whose answer is printed.
//	start ID...
//	    Create and initialise the nodes, in argument order.
//	app ID ARG...
//	    Run the application call Config.App builds from ARG... at ID.
//	deliver TO FROM [N]
//	    Deliver the head of the channel FROM→TO, or its N-th message
//	    (from 1, in the order pending lists it): a datagram, or a
//	    message with only datagrams ahead of it. Prints "TO <- FROM MSG",
//	    then TO's effects.
//	deliver-all
//	    Deliver until every channel is empty, always taking the head of the
//	    first non-empty channel in (TO, FROM) order. Fails after
//	    Config.DeliverAllLimit deliveries.
//	drop TO FROM [N]
//	    Lose the head of the channel FROM→TO, or its N-th message (as
//	    deliver takes it). Prints "dropped FROM -> TO MSG".
//	refuse TO FROM [N]
//	    The transport refuses the head of the channel FROM→TO, or its
//	    N-th message: one sent with TrySend by FROM's latest event (else
//	    the command fails). It leaves the channel, whatever is ahead of
//	    it, and FROM runs the refusal. Prints "refused FROM ?> TO MSG",
//	    then FROM's effects.
//	fire ID TIMER
//	    The timer expires now, whatever its deadline (the clock jumps to the
//	    deadline if that is later). Prints "ID: timer TIMER not scheduled"
//	    instead of failing when it is not scheduled.
//	reset ID [silent]
//	    Reset the node (state and timers lost, Init runs again), with RST
//	    unless silent; see Model.
//	transport-error ID PEER
//	    Report a broken connection to PEER at ID only; channels are untouched.
//	state [ID...]
//	    One line per node (every started node when none is given):
//	    "ID: STATE timers=[NAME...]", STATE rendered by Config.Describe.
//	pending
//	    Every queued message, one "FROM -> TO MSG" line each ("FROM ~> TO
//	    MSG" for a datagram, "FROM ?> TO MSG" for a message sent with
//	    TrySend), channels in (TO, FROM) order, FIFO within a
//	    channel.
//	check [safety|liveness]
//	    Evaluate the spec's properties of that kind (default safety) on the
//	    started nodes: one "NAME: ok" or "NAME: ERROR" line each.
//
// plus the service's own commands (Config.Commands).
//
// Every event a command runs prints its effects, one line each, in the order
// the handler made them: "FROM -> TO MSG" for a send ("~>" for a
// datagram, "?>" for a TrySend), "ID: set timer NAME
// +DURATION" and "ID: cancel timer NAME" for timer changes, "ID: reset" and
// "ID: transport error from PEER" before those events run, and "ID: EVENT
// ignored" when the core ignored the event. Messages print with %v, so give
// them a String method. A command that prints nothing outputs "ok".
//
// A command that cannot run (unknown command or node, bad arguments, an
// empty channel, an error from a hook, a message outside Spec.Messages
// sent or called, see node.Registry.CheckMessage) fails the test through
// datadriven.TestData.Fatalf with an error prefixed "nodetest: COMMAND:".
package nodetest
