package consequence

import "fmt"

// Late messages: the virtual clock of a model with a bounded property
// delivers every message within TimelyOptions.MaxDelay of its send (a
// timer due past a message's deadline waits for its delivery), because
// bounded properties hold only on a network that keeps some delay bound.
// Safety must hold on any network, and some bugs need a message to arrive
// after timers its delay bound would have held back: a vote request that
// reaches a node after the node restarted, or a leader's messages that
// reach a follower only after it has campaigned itself. Within
// Faults.Delays, ActDelay makes the head of a channel late: it stays
// where it is, to be delivered whenever the search chooses, and its
// channel imposes no deadline until it is delivered — every message
// behind it waits too, as on a stalled TCP connection (a message declared
// reorderable may still overtake it, ActDeliverAhead). Once it is
// delivered the channel's new head has its own send time again.
//
// A path that delayed a message broke the assumption its bounded
// properties rely on: they are not judged on it (boundedErr), so the
// budget finds only safety and history violations. A model without a
// bounded property has no deadline to lift: its messages may already wait
// any time, and the budget adds no action. With the budget zero, the
// default, the model has no such action and no state or hash of it.

// ActDelay makes the message Msg at the head of the channel Peer → Node
// late (within Faults.Delays): neither it nor what waits behind it holds
// the virtual clock back any more.
const ActDelay = ActDeliverAhead + 1

// lateStamp marks a channel item whose deadline ActDelay lifted: it has a
// send time no more (observer.stamp's are positive, 0 is an item without
// one).
const lateStamp int32 = -1

// Delays returns the messages delivered past the delay bound along the
// path to g (ActDelay).
func (g *GlobalState) Delays() int {
	if g.spent == nil {
		return 0
	}
	return int(g.spent.delays)
}

// delayable reports whether the channel's head may be made late: a
// message (not a transport error) with a send time.
func (c *channel) delayable() bool { return c.items[0].msg != nil && c.items[0].at > 0 }

// appendDelays appends an ActDelay for the head of every channel to a
// node of the model, while the budget lasts.
func (m *ActorModel) appendDelays(out []Action[ActorAction], g *GlobalState) []Action[ActorAction] {
	if m.obs == nil || m.obs.maxDelay == 0 || int(spentOf(g).delays) >= m.opts.Faults.Delays {
		return out
	}
	for _, c := range g.chans {
		i, ok := m.index(c.to)
		if !ok || c.from == c.to {
			continue
		}
		if c.delayable() {
			out = append(out, Action[ActorAction]{Node: i, Fault: true,
				Act: ActorAction{Kind: ActDelay, Node: c.to, Peer: c.from, Msg: c.items[0].msg}})
		}
	}
	return out
}

// nextDelay makes the head of the channel a.Peer → a.Node late, if it is
// still a.Msg and the budget allows.
func (m *ActorModel) nextDelay(g *GlobalState, a ActorAction) (*GlobalState, bool) {
	spent := spentOf(g)
	if m.obs == nil || m.obs.maxDelay == 0 || int(spent.delays) >= m.opts.Faults.Delays || a.Msg == nil {
		return nil, false
	}
	c := g.channel(a.Peer, a.Node)
	if c == nil || a.Pos != 0 || !c.delayable() {
		return nil, false
	}
	if h, err := m.msgHash(a.Msg); err != nil || h != c.items[0].h {
		return nil, false
	}
	items := make([]inflight, len(c.items))
	copy(items, c.items)
	items[0].at = lateStamp
	spent.delays++
	s := newSucc(g)
	s.setSpent(spent)
	s.setChan(a.Peer, a.Node, items)
	return s.g, true
}

// validateDelays reports a delay budget the model cannot explore.
func (f Faults) validateDelays() error {
	if f.Delays < 0 || f.Delays > MaxDeliveryFaults {
		return fmt.Errorf("%w: delays budget %d, want 0..%d", ErrActorModel, f.Delays, MaxDeliveryFaults)
	}
	return nil
}
