package bullet

import (
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Block requests: a receiver keeps up to MaxOutstanding requests at each
// accepted sender, each for a block the sender announced and the node
// neither has nor has asked anyone for, the rarest among its senders'
// views (fewest senders announcing it), from a random start so that ties
// go to a random block.

// request tops up the outstanding requests at every accepted sender.
func (s *State) request(env node.Env) {
	if s.Complete() {
		return
	}
	for i := range s.Senders {
		for s.Senders[i].Accepted && len(s.Senders[i].Asked) < s.opts.MaxOutstanding {
			b, ok := s.rarest(env, i)
			if !ok {
				break
			}
			s.Senders[i].Asked = append(s.Senders[i].Asked, b)
			env.Send(s.Senders[i].ID, Request{Block: b})
		}
	}
}

// rarest picks the block to request from sender i, if any: scanning from
// a random block, the first announced by that sender alone, else the
// first of the fewest senders.
func (s *State) rarest(env node.Env, i int) (uint32, bool) {
	view := s.Senders[i].View
	n := s.opts.Blocks
	start := env.Rand().IntN(n)
	best, bestRarity := uint32(0), 0
	for k := range n {
		b := uint32((start + k) % n)
		if !has(view, b) || has(s.Have, b) || s.asked(b) {
			continue
		}
		r := 0
		for _, l := range s.Senders {
			if l.Accepted && has(l.View, b) {
				r++
			}
		}
		if r == 1 {
			return b, true
		}
		if bestRarity == 0 || r < bestRarity {
			best, bestRarity = b, r
		}
	}
	return best, bestRarity > 0
}

// asked reports whether b is requested from some sender.
func (s *State) asked(b uint32) bool {
	for _, l := range s.Senders {
		if slices.Contains(l.Asked, b) {
			return true
		}
	}
	return false
}

// handleRequest answers a receiver's request with the block; a request
// from a node that is not a receiver (the node reset, or dropped it), or
// for a block the node does not have, is answered with Disown.
func (s *State) handleRequest(env node.Env, from node.ID, m Request) {
	if s.receiverIndex(from) < 0 || int(m.Block) >= s.opts.Blocks || !has(s.Have, m.Block) {
		env.Send(from, Disown{})
		return
	}
	env.Send(from, Block{Index: m.Block, Data: s.payload})
}

// handleBlock stores a block (its bit: the data is not kept), announces it
// to every receiver through their shadows, and requests more.
func (s *State) handleBlock(env node.Env, from node.ID, m Block) {
	if i := s.senderIndex(from); i >= 0 {
		l := &s.Senders[i]
		if k := slices.Index(l.Asked, m.Index); k >= 0 {
			l.Asked = slices.Delete(l.Asked, k, k+1)
			if len(l.Asked) == 0 {
				l.Asked = nil
			}
		}
	}
	if int(m.Index) >= s.opts.Blocks || has(s.Have, m.Index) {
		s.request(env)
		return
	}
	set(s.Have, m.Index)
	for i := range s.Receivers {
		set(s.Receivers[i].Shadow, m.Index)
	}
	if count(s.Have) == s.opts.Blocks {
		s.Completed = env.Now().UnixNano()
		s.unpeerAll(env)
		return
	}
	s.request(env)
}
