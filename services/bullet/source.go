package bullet

import (
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The discovery is the smallest that gives the mesh what RanSub gives the
// paper's Bullet′: every node learns a random, changing subset of the
// members. Nodes join through the source, which keeps the member list and
// answers every Join (the first and each discover timer's) with a fresh
// random sample.

// handleJoin (the source) records the joiner, makes it a push target while
// there are fewer than PushFanout, and answers with a Sample.
func (s *State) handleJoin(env node.Env, from node.ID) {
	if s.Source != env.Self() {
		return
	}
	s.Members = insertID(s.Members, from)
	if len(s.PushTargets) < s.opts.PushFanout && !slices.Contains(s.PushTargets, from) {
		s.PushTargets = append(s.PushTargets, from)
		if int(s.NextPush) < s.opts.Blocks && !env.TimerScheduled(TimerPush) {
			env.SetTimer(TimerPush, s.opts.PushInterval)
		}
	}
	env.Send(from, Sample{Peers: s.sample(env, from)})
}

// sample draws up to SampleSize members other than joiner, returned
// ascending.
func (s *State) sample(env node.Env, joiner node.ID) []node.ID {
	pool := make([]node.ID, 0, len(s.Members))
	for _, m := range s.Members {
		if m != joiner {
			pool = append(pool, m)
		}
	}
	env.Rand().Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	if len(pool) > s.opts.SampleSize {
		pool = pool[:s.opts.SampleSize]
	}
	if len(pool) == 0 {
		return nil
	}
	slices.Sort(pool)
	return pool
}

// handleSample adds the sampled peers to the known ones. Only the source
// samples, and a sample holds at most SampleSize peers: a Sample from
// another node, or the part of a longer one past SampleSize, is ignored,
// so a peer cannot grow Known without bound.
func (s *State) handleSample(env node.Env, from node.ID, m Sample) {
	if from != s.Source {
		return
	}
	self := env.Self()
	for _, p := range m.Peers[:min(len(m.Peers), s.opts.SampleSize)] {
		if p != self && p != node.None {
			s.Known = insertID(s.Known, p)
		}
	}
}

// push (the source) sends its next block to the next push target, round
// robin by block, with TrySend: a full queue refuses it, and
// HandleSendRefused takes NextPush back to it.
func (s *State) push(env node.Env) {
	if len(s.PushTargets) == 0 || int(s.NextPush) >= s.opts.Blocks {
		return
	}
	b := s.NextPush
	s.NextPush++
	env.TrySend(s.PushTargets[int(b)%len(s.PushTargets)], Block{Index: b, Data: s.payload})
	if int(s.NextPush) < s.opts.Blocks {
		env.SetTimer(TimerPush, s.opts.PushInterval)
	}
}
