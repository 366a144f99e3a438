package bullet

import (
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Peering: a receiver asks a known peer to become its sender; the sender
// accepts while it has fewer than MaxReceivers receivers, starting the
// receiver's shadow file map from its whole file map. The paper's
// receivers peer "with the senders that have the most disjoint data"; here
// the peering timer keeps the senders that still have blocks the node
// lacks and replaces one that has none (the least useful first), so the
// senders kept are those with the most disjoint data.

// senderIndex and receiverIndex return the position of id's link, or -1.
// The links are few (MaxSenders, MaxReceivers) and the property checks
// call these for every pair at every emulated step: a scan beats a
// binary search's closure.
func (s *State) senderIndex(id node.ID) int {
	for i := range s.Senders {
		if s.Senders[i].ID == id {
			return i
		}
	}
	return -1
}

func (s *State) receiverIndex(id node.ID) int {
	for i := range s.Receivers {
		if s.Receivers[i].ID == id {
			return i
		}
	}
	return -1
}

func cmpID(a, b node.ID) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// dropSender forgets the sender id, its view and its outstanding requests.
func (s *State) dropSender(id node.ID) {
	if i := s.senderIndex(id); i >= 0 {
		s.Senders = slices.Delete(s.Senders, i, i+1)
		if len(s.Senders) == 0 {
			s.Senders = nil
		}
	}
}

// dropReceiver forgets the receiver id and its shadow file map.
func (s *State) dropReceiver(id node.ID) {
	if i := s.receiverIndex(id); i >= 0 {
		s.Receivers = slices.Delete(s.Receivers, i, i+1)
		if len(s.Receivers) == 0 {
			s.Receivers = nil
		}
	}
}

// handlePeerRequest accepts from as a receiver (anew if it already was
// one: its view starts empty again) unless the node serves MaxReceivers
// others.
func (s *State) handlePeerRequest(env node.Env, from node.ID) {
	i := s.receiverIndex(from)
	if i < 0 && len(s.Receivers) >= s.opts.MaxReceivers {
		env.Send(from, PeerReject{})
		return
	}
	link := ReceiverLink{ID: from, Shadow: cloneMap(s.Have), Told: newMap(s.opts.Blocks)}
	if i >= 0 {
		s.Receivers[i] = link
	} else {
		i, _ := slices.BinarySearchFunc(s.Receivers, from, func(l ReceiverLink, id node.ID) int { return cmpID(l.ID, id) })
		s.Receivers = slices.Insert(s.Receivers, i, link)
	}
	env.Send(from, PeerAccept{})
}

// handlePeerAccept makes a pending sender a sender with an empty view.
func (s *State) handlePeerAccept(env node.Env, from node.ID) {
	i := s.senderIndex(from)
	if i < 0 || s.Senders[i].Accepted {
		return
	}
	s.Senders[i] = SenderLink{ID: from, Accepted: true, View: newMap(s.opts.Blocks)}
}

// peer is the peering timer: replace a useless sender, ask a new one, and
// request blocks.
func (s *State) peer(env node.Env) {
	if s.Complete() {
		return
	}
	if len(s.Senders) >= s.opts.MaxSenders {
		s.dropUseless(env)
	}
	if len(s.Senders) < s.opts.MaxSenders {
		s.askNewSender(env)
	}
	s.request(env)
}

// dropUseless unpeers the accepted sender with no block the node lacks and
// no outstanding request, the first by ID if several.
func (s *State) dropUseless(env node.Env) {
	for _, l := range s.Senders {
		if l.Accepted && len(l.Asked) == 0 && countAndNot(l.View, s.Have) == 0 {
			env.Send(l.ID, Unpeer{})
			s.dropSender(l.ID)
			return
		}
	}
}

// askNewSender sends PeerRequest to a random known peer that is not a
// sender yet, and records it as a pending sender.
func (s *State) askNewSender(env node.Env) {
	n := 0
	for _, p := range s.Known {
		if s.senderIndex(p) < 0 {
			n++
		}
	}
	if n == 0 {
		return
	}
	k := env.Rand().IntN(n)
	for _, p := range s.Known {
		if s.senderIndex(p) >= 0 {
			continue
		}
		if k > 0 {
			k--
			continue
		}
		i, _ := slices.BinarySearchFunc(s.Senders, p, func(l SenderLink, id node.ID) int { return cmpID(l.ID, id) })
		s.Senders = slices.Insert(s.Senders, i, SenderLink{ID: p})
		env.Send(p, PeerRequest{})
		return
	}
}

// unpeerAll tells every sender the node no longer downloads from it.
func (s *State) unpeerAll(env node.Env) {
	for _, l := range s.Senders {
		env.Send(l.ID, Unpeer{})
	}
	s.Senders = nil
}
