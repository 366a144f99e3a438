package kv

import (
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"go.etcd.io/raft/v3"
)

// raftClock is a node's raft ticker: one tick every Options.Raft.Tick,
// as etcd's raftNode ticks its RawNode from a time.Ticker. Crystalball's
// timers do not fire for every tick: a tick that only counts (raft's
// electionElapsed and heartbeatElapsed) changes nothing a peer sees, so
// the timer "tick" stands for the ticks up to the first one at which raft
// acts on its own — a follower's election timeout, a leader's heartbeat
// or quorum check — and the store hands raft, before every other input,
// the ticks that have passed by then on the node's own clock (catchUp),
// and after it those the input's re-arming no longer leaves to the
// timer (rearm). What raft sees is the sequence of ticks and inputs a
// ticker would give it. A skewed node's timer fires early or late, and its ticks come
// faster or slower with it; the ticker's phase follows the timer, as a
// ticker's follows the clock that drives it.
//
// Role and Timeout make raft's randomized election timeout a draw of
// the node's seeded source: raft draws it from crypto/rand whenever it
// changes role or term (raft.reset); the store draws it from Env.Rand
// when the role it saw last (term, state, leader) changes, and writes it
// over raft's after every call into raft (pinTimeout). Between two role
// changes raft keeps the same timeout, as it does; a reset that changes
// none of the three (none in this version of raft) keeps the previous
// draw.
type raftClock struct {
	// Last is the time of the last tick given (the ticker's phase);
	// Armed is how many ticks after it the timer "tick" stands for (0:
	// none is armed).
	Last  time.Time
	Armed int
	Role  role
	// Timeout is the drawn election timeout, in ticks.
	Timeout int
}

// role is what raft's timeout is drawn afresh for.
type role struct {
	Term, Lead uint64
	State      raft.StateType
}

// start starts the ticker at now.
func (c *raftClock) start(now time.Time) { c.Last, c.Armed = now, 0 }

// passed is how many ticks have passed by now since the last, short of
// the armed timer's (its own firing gives that one).
func (c *raftClock) passed(now time.Time, tick time.Duration) int {
	if !now.After(c.Last) {
		return 0
	}
	n := int(min(now.Sub(c.Last)/tick, 1<<20))
	if c.Armed > 0 {
		n = min(n, c.Armed-1)
	}
	return n
}

// arm sets the timer "tick" for the k-th tick after the last one given
// (k <= 0: raft will not act on its own; the timer is cancelled).
func (c *raftClock) arm(env node.Env, k int, tick time.Duration) {
	c.Armed = max(k, 0)
	if k <= 0 {
		env.CancelTimer(timerTick)
		return
	}
	at := c.Last.Add(time.Duration(k) * tick)
	env.SetTimer(timerTick, max(at.Sub(env.Now()), 0))
}

// catchUp hands raft the ticks that have passed by now, handling what
// each asks before the next, as a ticker's loop does between two ticks.
func (s *store) catchUp(env node.Env) {
	n := s.clock.passed(env.Now(), s.opts.Raft.Tick)
	s.giveTicks(env, n)
	s.clock.Last = s.clock.Last.Add(time.Duration(n) * s.opts.Raft.Tick)
	s.clock.Armed -= min(n, s.clock.Armed)
}

// rearm arms the timer "tick" for raft's next act, first handing raft
// the ticks that have passed by now and that the timer no longer stands
// for. The timer stands for a tick that is due (an input at its instant
// leaves it to the timer's firing, catchUp), but an input that moves
// raft's next act later (a heartbeat resetting the election counter)
// moves the timer past it: the tick has passed and only counts, and it is
// given now, before the handler returns. Left for the next input, it
// would make one at the same instant count it without changing what the
// node observes (its election counter reset again): the replayed adapter
// does not log such an input, and a replay would count the tick again
// later. With it given here, every handler ends with every tick up to now
// given but one the timer stands for, and its observation says so.
func (s *store) rearm(env node.Env) {
	s.clock.Armed = max(s.ticksToAct(), 0)
	s.catchUp(env)
	s.clock.arm(env, s.ticksToAct(), s.opts.Raft.Tick)
}

// tickFired gives raft the ticks the timer stood for (at least one: a
// timer that fires early, on a node whose clock is fast, still ticks),
// the last of them now.
func (s *store) tickFired(env node.Env) {
	s.giveTicks(env, max(s.clock.Armed, 1))
	s.clock.Last, s.clock.Armed = env.Now(), 0
}

// giveTicks ticks raft n times, handling each tick's Ready.
func (s *store) giveTicks(env node.Env, n int) {
	for range n {
		s.rn.Tick()
		s.pinTimeout(env)
		s.drain(env)
	}
}

// ticksToAct is how many ticks from the last one raft next acts on its
// own: a leader at its next heartbeat or quorum check, anyone else at its
// election timeout (0: never, a node that cannot campaign).
func (s *store) ticksToAct() int {
	h := internals.read(s.rn)
	if s.rn.BasicStatus().RaftState == raft.StateLeader {
		beat := s.opts.Raft.HeartbeatTick - h.HeartbeatElapsed
		check := s.opts.Raft.ElectionTick - h.ElectionElapsed
		return max(min(beat, check), 1)
	}
	if !s.promotable() {
		return 0
	}
	return max(h.RandomizedElectionTimeout-h.ElectionElapsed, 1)
}

// promotable is raft's rule for who campaigns: a voter of the
// configuration the node applied (a learner or a joiner not yet added
// never times out).
func (s *store) promotable() bool {
	if s.app.Conf == nil {
		return s.self <= uint64(s.opts.initialVoters())
	}
	return slices.Contains(s.app.Conf.Voters, s.self)
}

// pinTimeout draws raft's randomized election timeout from env's source
// when the node's role changed since the last draw, and writes it over
// whatever raft drew.
func (s *store) pinTimeout(env node.Env) {
	st := s.rn.BasicStatus()
	r := role{Term: st.GetTerm(), Lead: st.Lead, State: st.RaftState}
	if r != s.clock.Role || s.clock.Timeout == 0 {
		e := s.opts.Raft.ElectionTick
		s.clock.Role, s.clock.Timeout = r, e+env.Rand().IntN(e)
	}
	internals.setRandomizedElectionTimeout(s.rn, s.clock.Timeout)
}
