/*
 * Two-phase commit (Gray and Lamport, TwoPhase.tla) in Promela, written to
 * be the same specification as consequence/twophase/twophase.go, so that
 * SPIN's state count and speed can be compared with our explorer's.
 *
 *   spin -DN=7 -a twophase.pml && gcc -O2 -DSAFETY -o pan pan.c && ./pan
 *
 * N is the number of resource managers (RMs), 1..14; see run.sh.
 *
 * Variables (as in twophase.go): rmState[rm] in {WORKING, PREPARED,
 * COMMITTED, ABORTED}; tmState in {TM_INIT, TM_COMMITTED, TM_ABORTED};
 * tmPrepared, the set of RMs from which the TM has received Prepared, as N
 * bit flags; the message set, which only grows and is never consumed, as N
 * bit flags for Prepared(rm) plus two booleans for Commit and Abort. There
 * are no channels: the state is exactly the specification's variables.
 *
 * One process runs a single do loop whose options are the actions, each one
 * d_step { guard -> effect }: one transition per action, and the process is
 * back at the loop's head after every step, so its control state is the
 * same in every reachable state and SPIN's "states stored" is the number of
 * specification states, 4^N + 2^N + 6^N (288 for 3 RMs, 8,832 for 5,
 * 296,448 for 7, 1,745,408 for 8). No state is a deadlock: TMAbort is
 * enabled while the TM is in init, and once Commit or Abort is sent every
 * RM can receive it again (a self-loop, as in TLA+).
 *
 * TCConsistent (no RM committed while another aborted) is checked as an
 * assertion at the end of every step, i.e. in every state reached (the
 * initial state satisfies it trivially). Compile with -DCLAIM to check it
 * with a never claim instead (never { do :: assert(TCConsistent) od }),
 * which adds one claim step per system step but no states. -DATOMIC uses
 * atomic instead of d_step (the guard is a transition, the effect's
 * statements are "atomic steps"; no intermediate state is stored).
 * -DBUG plants twophase.go's BugCommitWithoutMsg: a prepared RM may commit
 * without a Commit message; SPIN must then report an assertion violation.
 */

#ifndef N
#define N 3
#endif

#define WORKING   0
#define PREPARED  1
#define COMMITTED 2
#define ABORTED   3

#define TM_INIT      0
#define TM_COMMITTED 1
#define TM_ABORTED   2

byte rmState[N];
byte tmState;             /* TM_INIT */
unsigned tmPrepared : N;  /* bit rm: rm in tmPrepared */
unsigned msgPrepared : N; /* bit rm: Prepared(rm) in msgs */
bool msgCommit;           /* Commit in msgs */
bool msgAbort;            /* Abort in msgs */

#define ALL ((1 << N) - 1)
#define BIT(i) (1 << (i))

#define IS_COMMITTED(i) (rmState[i] == COMMITTED)
#define IS_ABORTED(i)   (rmState[i] == ABORTED)

/* ANY(p) is p(0) || ... || p(N-1); ACTIONS is RM_ACTIONS(0) ... (N-1). */
#define ANY1(p)  p(0)
#define ANY2(p)  (ANY1(p) || p(1))
#define ANY3(p)  (ANY2(p) || p(2))
#define ANY4(p)  (ANY3(p) || p(3))
#define ANY5(p)  (ANY4(p) || p(4))
#define ANY6(p)  (ANY5(p) || p(5))
#define ANY7(p)  (ANY6(p) || p(6))
#define ANY8(p)  (ANY7(p) || p(7))
#define ANY9(p)  (ANY8(p) || p(8))
#define ANY10(p) (ANY9(p) || p(9))
#define ANY11(p) (ANY10(p) || p(10))
#define ANY12(p) (ANY11(p) || p(11))
#define ANY13(p) (ANY12(p) || p(12))
#define ANY14(p) (ANY13(p) || p(13))
#define ANY_(n, p) ANY##n(p)
#define ANY(n, p) ANY_(n, p)

#define TCConsistent (!(ANY(N, IS_COMMITTED) && ANY(N, IS_ABORTED)))

#ifdef CLAIM
#define CHECK skip
never {
	do
	:: assert(TCConsistent)
	od
}
#else
#define CHECK assert(TCConsistent)
#endif

#ifdef ATOMIC
#define STEP atomic
#else
#define STEP d_step
#endif

#ifdef BUG
#define RCV_COMMIT_GUARD(i) (msgCommit || rmState[i] == PREPARED)
#else
#define RCV_COMMIT_GUARD(i) msgCommit
#endif

/* The five actions of RM i, and TMRcvPrepared(i). */
#define RM_ACTIONS(i) \
	/* TMRcvPrepared(i) */ \
	:: STEP { tmState == TM_INIT && (msgPrepared & BIT(i)) -> \
		tmPrepared = tmPrepared | BIT(i); CHECK } \
	/* RMPrepare(i) */ \
	:: STEP { rmState[i] == WORKING -> \
		rmState[i] = PREPARED; msgPrepared = msgPrepared | BIT(i); CHECK } \
	/* RMChooseToAbort(i) */ \
	:: STEP { rmState[i] == WORKING -> rmState[i] = ABORTED; CHECK } \
	/* RMRcvCommitMsg(i) */ \
	:: STEP { RCV_COMMIT_GUARD(i) -> rmState[i] = COMMITTED; CHECK } \
	/* RMRcvAbortMsg(i) */ \
	:: STEP { msgAbort -> rmState[i] = ABORTED; CHECK }

#define ACTIONS1  RM_ACTIONS(0)
#define ACTIONS2  ACTIONS1 RM_ACTIONS(1)
#define ACTIONS3  ACTIONS2 RM_ACTIONS(2)
#define ACTIONS4  ACTIONS3 RM_ACTIONS(3)
#define ACTIONS5  ACTIONS4 RM_ACTIONS(4)
#define ACTIONS6  ACTIONS5 RM_ACTIONS(5)
#define ACTIONS7  ACTIONS6 RM_ACTIONS(6)
#define ACTIONS8  ACTIONS7 RM_ACTIONS(7)
#define ACTIONS9  ACTIONS8 RM_ACTIONS(8)
#define ACTIONS10 ACTIONS9 RM_ACTIONS(9)
#define ACTIONS11 ACTIONS10 RM_ACTIONS(10)
#define ACTIONS12 ACTIONS11 RM_ACTIONS(11)
#define ACTIONS13 ACTIONS12 RM_ACTIONS(12)
#define ACTIONS14 ACTIONS13 RM_ACTIONS(13)
#define ACTIONS_(n) ACTIONS##n
#define ACTIONS(n) ACTIONS_(n)

active proctype TwoPhase()
{
	do
	/* TMCommit */
	:: STEP { tmState == TM_INIT && tmPrepared == ALL ->
		tmState = TM_COMMITTED; msgCommit = true; CHECK }
	/* TMAbort */
	:: STEP { tmState == TM_INIT ->
		tmState = TM_ABORTED; msgAbort = true; CHECK }
	ACTIONS(N)
	od
}
