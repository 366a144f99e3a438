// Package permits is a cluster-wide permit limiter written the way a new
// user writes a service from the README: a planted bug on a transport
// error, its corrected twin, and the stale view on which the immediate
// safety check takes a loan for a permit too many.
//
// # The protocol
//
// A cluster of n nodes (1..n) shares Share·n permits: each node starts
// with Share of its own. Every node runs jobs on its own timer, one at a
// time; a job holds Need permits for JobLength (node 1 runs two-permit
// jobs, the others one-permit jobs) and the next starts IdleTime after.
// A node short of permits borrows one from one peer at a time (Borrow);
// a peer with a free permit that waits for none itself lends it (Lend,
// numbered per lender), else refuses (NoPermit), and the borrower asks
// the next peer, or everyone again RetryAfter later. When its job ends
// the borrower gives every borrowed permit back (Return), which the
// lender acknowledges (Thanks); Returns not yet thanked for are sent
// again after a transport error with their lender and after a restart.
// The permits, the loans both ways and the loan numbers are kept on disk
// (node.Durable); a restart ends the job under way and gives its
// borrowed permits back. Every other node is a neighbour.
//
// Properties: AtMostLimit (safety: the permits the nodes hold, their own
// and those on loan to them, are at most the limit); NoBorrowerStuck
// (bounded, AnswerBound: a moment comes when no Borrow waits for its
// answer); PermitsSettled (bounded, SettleBound, while every node is up:
// the nodes hold all the permits, none lost or on its way).
//
// # The bug and its correction
//
// The planted bug: a lender that gets a transport error from a borrower
// takes back every permit it lent it and has not had back, taking the
// broken connection for the borrower's crash. A connection that breaks
// while the borrower's job runs leaves the borrower, whose process is up,
// holding the permit the lender now counts again: a permit too many
// (`check --breaks 1`, depth 5: n1's job timer, Borrow at n2, Lend at n1,
// the break, n2's transport error). The correction (Options.AskBorrower,
// --fix ask-borrower or all) marks those loans in doubt and asks the
// borrower which it holds (Query, Holding): one it does not hold was lost
// with the connection, or given back with a Return the break lost (sent
// again, it then counts for nothing), and comes back; one it holds stays
// until its Return. A connection is FIFO and the Query goes after the
// break, so nothing older is still on its way.
//
// # The stale view
//
// A borrower's Lend handler adds a permit. On the borrower's gathered
// view, which holds the lender's checkpoint from before the lender gave
// the permit away (up to a gather interval old), the permit counts twice
// and AtMostLimit fails, though the true state is within the limit
// (testdata/stale-view.txt). The immediate safety check does not judge
// on that view: the Lend is stamped with a checkpoint number at or past
// the lender's in the view, so the lender has moved on since, and the
// check leaves it out (steering's "judges with what the node knows now").
// Where the check does veto a message, the connection breaks for both
// services, so the borrower's own recovery runs too. bench/steerlive
// measures both shells' steering on it (docs/RESULTS.md).
//
// # Running it
//
// cmd/newcomer in package newcomer serves it as "permits":
//
//	go run ./examples/newcomer/cmd/newcomer check --service permits --nodes 3 --breaks 1 --max-depth 8
//	go run ./examples/newcomer/cmd/newcomer check --service permits --nodes 3 --breaks 1 --resets 1 --max-depth 14 --fix all
//	go run ./examples/newcomer/cmd/newcomer emulate --service permits --nodes 3 --duration 10m --churn 1/m --breaks 2/m --immediate
package permits
