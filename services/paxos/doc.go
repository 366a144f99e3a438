// Package paxos is single-decree Paxos as the CrystalBall paper runs it in
// its execution-steering experiments (§5.4.2, Figure 13), written against
// node.Service, with the paper's two injected bugs as options. A service
// that cannot reproduce the bugs cannot show that the predictor finds them.
//
// # The protocol
//
// Every node of Options.Members is proposer, acceptor and learner, as in
// the paper's experiments. The application asks a node to propose a value
// with the Propose call. The five steps of the paper's footnote:
//
//  1. The proposer picks a ballot (round, node) above every round it has
//     used or seen and sends Prepare to every acceptor.
//  2. An acceptor promises a ballot above every ballot it promised before,
//     answering Promise with the last proposal it accepted, if any.
//  3. With Promises from a majority, the proposer sends Accept to every
//     acceptor with the value of the Promise with the highest accepted
//     ballot, or its own value when none reported one.
//  4. An acceptor accepts unless it has promised a higher ballot meanwhile,
//     and sends Learn with the accepted value to every learner.
//  5. A learner that gets Learn for one ballot from a majority considers its
//     value chosen (State.Learned).
//
// A proposer whose value is not learned within Options.RetryTimeout (plus
// random jitter, so duelling proposers drift apart) starts over with a
// higher ballot; that is the only retransmission. Acceptors answer nothing
// to a Prepare or Accept they refuse, as in the paper's description.
//
// What a real node keeps on disk survives a reset through node.Durable:
// the acceptor's promise and accepted proposal, the learned value and the
// proposer's highest round (so a restarted proposer never reuses a
// ballot). The proposer's ballot in progress and the learner's counts are
// lost; an application whose value was not chosen resubmits it
// (node.Restarter), and a node that has neither proposed nor learned
// declares a Propose of ValueOf(self) for the explorer (node.AppCaller).
//
// # The paper's bugs
//
// The zero Options is correct Paxos. Each bug is a flag, named on command
// lines and in scripts as the paper names it (EnableBug, BugNames):
//
//   - bug1 (BugLastPromise): in step 3 the proposer takes the value of the
//     last Promise it received instead of the one with the highest
//     accepted ballot (testdata/figure13-bug1.txt).
//   - bug2 (BugVolatileAcceptor): the acceptor's promise and accepted
//     proposal are not written to disk, so a reset forgets them
//     (testdata/figure13-bug2.txt).
//
// Figure 13 itself is not in the text of the paper we have; the scripts
// follow its description: A=n1, B=n2, C=n3, two rounds; in the first, the
// communication between C and the others is broken and a Learn from A to B
// is dropped, so A chooses its own value; in the second, the communication
// between A and the others is broken and the value proposed by C is
// accepted by B. The paper's steering remark, "C rejects the Prepare
// message sent by B", suggests that B led round 2 in their run; the
// shortest violation consequence prediction finds from the end of round 1
// is exactly that (the scripts' explore command).
//
// # Properties
//
// SafetyProperties are OneValueChosen, at most one value chosen across all
// nodes, judged from the learned values and from the proposals a majority
// of members hold as accepted at one ballot (Lamport's definition of
// chosen), and OneValueLearned, no two nodes learned different values: the
// weaker form the paper's experiment enforces (its immediate safety check
// stops the second value from being learned, not from being accepted by a
// majority). Every violation of OneValueLearned violates OneValueChosen;
// the reverse does not hold. LivenessProperties
// is AllLearned: every member eventually learns a value. Checks read only
// the nodes in the view they are given and allocate nothing while the
// property holds. Summarize reduces a view to a few figures for reports.
//
// # Usage
//
//	spec := paxos.NewSpec(paxos.Options{}) // correct Paxos among n1..n3
//	core, _ := node.NewCore(node.CoreConfig{ID: 1, Factory: spec.New})
//	core.Step(node.Event{Kind: node.EventInit, At: now})
//	fx, _ := core.Step(node.Event{Kind: node.EventApp, At: now, Msg: paxos.Propose{Value: "v1"}})
//	// carry out fx.Sends and fx.Timers; State.Learned is the outcome.
package paxos
