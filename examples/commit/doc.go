// Package commit is a two-phase commit written the way a new user writes
// a service from the README: a planted bug on a transport error, its
// corrected twin, and the stale view on which the immediate safety check
// takes a commit for one the coordinator never decided.
//
// # The protocol
//
// Node 1 is the coordinator, nodes 2..n the participants. The coordinator
// runs one transaction at a time, numbered from 1, Pause after the last
// one's decision was acknowledged by everyone: it asks every participant
// to prepare (Prepare); a participant prepares for PrepareTime plus up to
// PrepareJitter and votes (Vote) — no on every RefuseEvery-th
// transaction, which it then aborts, yes otherwise, after which it is
// prepared (in doubt) until it learns the outcome. A no vote, or a
// transport error from a participant that has not voted, makes the
// coordinator abort; yes from everyone makes it commit. It sends the
// decision to everyone (Decision), again RetryAfter after a transport
// error to a participant that has not acknowledged it (Ack). The
// coordinator's transaction, phase and decisions and a participant's
// vote and decisions are kept on disk (node.Durable); a restarted
// coordinator aborts the transaction it was still voting on and sends the
// decision it had made again. Each node keeps its newest LogLength
// decisions. The coordinator's neighbours are the participants, a
// participant's the coordinator.
//
// Properties: AgreementAtomic (safety: the nodes that know a
// transaction's outcome know the same one, and no participant commits a
// transaction the coordinator has not begun, not decided, or aborted);
// NoTxnInDoubt (bounded, DoubtBound: a moment comes when no participant
// is in doubt).
//
// # The bug and its correction
//
// The planted bug: a prepared participant that gets a transport error
// from the coordinator aborts the transaction on its own, so as not to
// hold its locks for a coordinator that may be gone. But the coordinator
// may have counted its yes vote and committed, and the others commit
// (`check --breaks 1`, depth 9: Prepare at both participants, both vote,
// the coordinator commits, n2's connection to it breaks, n2 aborts). The
// correction (Options.AskCoordinator, --fix ask-coordinator or all) stays
// prepared and asks the coordinator for the outcome (Status) RetryAfter
// later, and again after a restart; the coordinator answers a decided
// transaction with its decision.
//
// # The stale view
//
// A participant's Decision handler commits. On the participant's
// gathered view, whose coordinator checkpoint is from before the
// coordinator decided (or began) the transaction, the commit is one the
// coordinator never decided and AgreementAtomic fails, though the true
// state agrees (testdata/stale-view.txt). The immediate safety check does
// not judge on that view: the Decision is stamped at or past the
// coordinator's checkpoint there, so the check leaves the coordinator
// out, and the participant commits. bench/steerlive measures steering on
// it (docs/RESULTS.md).
//
// # Running it
//
// cmd/newcomer in package newcomer serves it as "commit":
//
//	go run ./examples/newcomer/cmd/newcomer check --service commit --nodes 3 --breaks 1 --max-depth 10
//	go run ./examples/newcomer/cmd/newcomer check --service commit --nodes 3 --breaks 1 --resets 1 --max-depth 16 --fix all
//	go run ./examples/newcomer/cmd/newcomer emulate --service commit --nodes 5 --duration 10m --churn 1/m --breaks 2/m --immediate
package commit
