package bullet

import "github.com/seed6eee2ec7/crystalball/node"

// File-map diffs. A sender keeps, per receiver, a shadow file map: the
// blocks it has and has not announced to that receiver. Every diff timer
// it turns each non-empty shadow into a Diff, sent with TrySend, and
// clears the shadow. The transport may refuse the Diff (its queue to the
// receiver is full of blocks): that is where the paper's bug lies.

// sendDiffs sends each receiver with a non-empty shadow its diff.
func (s *State) sendDiffs(env node.Env) {
	for i := range s.Receivers {
		l := &s.Receivers[i]
		if count(l.Shadow) == 0 {
			continue
		}
		blocks := blocksOf(l.Shadow)
		for w, m := range l.Shadow {
			l.Told[w] |= m
		}
		clear(l.Shadow)
		l.Sent++
		env.TrySend(l.ID, Diff{Blocks: blocks})
	}
}

// refuseDiff handles a Diff the transport refused. The paper's code
// clears the receiver's shadow file map, so the sender never announces
// those blocks again; with Options.FixKeepShadow the blocks go back into
// the shadow and the next diff timer sends them (never a TrySend from
// here: the queue that refused is still full).
func (s *State) refuseDiff(env node.Env, to node.ID, m Diff) {
	i := s.receiverIndex(to)
	if i < 0 {
		return
	}
	l := &s.Receivers[i]
	l.Sent--
	for _, b := range m.Blocks {
		if int(b) < s.opts.Blocks {
			l.Told[b/64] &^= 1 << (b % 64) // the transport did not take them
		}
	}
	if !s.opts.FixKeepShadow {
		clear(l.Shadow)
		return
	}
	for _, b := range m.Blocks {
		if int(b) < s.opts.Blocks {
			set(l.Shadow, b)
		}
	}
}

// handleDiff adds the announced blocks to the view of an accepted sender
// and requests blocks. A diff from a node that is not an accepted sender
// (one the node dropped, or that has not answered PeerAccept yet) belongs
// to an older peering and is ignored.
func (s *State) handleDiff(env node.Env, from node.ID, m Diff) {
	i := s.senderIndex(from)
	if i < 0 || !s.Senders[i].Accepted {
		return
	}
	l := &s.Senders[i]
	l.Received++
	for _, b := range m.Blocks {
		if int(b) < s.opts.Blocks {
			set(l.View, b)
		}
	}
	s.request(env)
}
