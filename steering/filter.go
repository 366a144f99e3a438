package steering

import (
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
)

// FilterKind says which events a Filter matches.
type FilterKind uint8

const (
	// FilterMessage matches deliveries of messages of one type from one
	// sender, datagrams included.
	FilterMessage FilterKind = iota + 1
	// FilterTimer matches one timer.
	FilterTimer
	// FilterApp matches application calls of one type.
	FilterApp
	// FilterTransportError matches the transport error about one peer
	// (the node's connection to From broke): it is postponed, so the
	// node's failure handling for that peer runs later. It is the filter
	// of a path that hinges on a node learning of a broken connection
	// before something else happens (a reply in flight arrives, a timer
	// fires). Postponing is the one thing a node can do about it: the
	// connection is already gone both ways when the error is delivered,
	// so breaking it again would change nothing, and dropping the error
	// would leave the service believing in a dead connection for ever.
	FilterTransportError
)

// Filter is an event filter at one node: the paper's (message type, source,
// destination) for messages, the handler's identity for timers and
// application calls, the peer for transport errors. A matched message is
// dropped (and, with Break, the connection to its sender is broken so the
// sender's failure handling runs); a matched timer, application call or
// transport error is postponed, not dropped.
type Filter struct {
	Kind FilterKind
	// Node is the node the filter is installed at (the destination).
	Node node.ID
	// From is the sender of a filtered message, or the peer of a
	// filtered transport error.
	From node.ID
	// Type is the message type of a filtered message or application call.
	Type string
	// Timer is the name of a filtered timer.
	Timer string
	// Break breaks the connection to the sender of a dropped message.
	Break bool
}

// String renders the filter for logs, e.g. "n9: drop+break randtree.Join
// from n13", "n9: postpone timer recovery", "n9: postpone transport-error
// from n13".
func (f Filter) String() string {
	switch f.Kind {
	case FilterMessage:
		return fmt.Sprintf("%v: %s %s from %v", f.Node, dropVerb[f.Break], f.Type, f.From)
	case FilterTimer:
		return fmt.Sprintf("%v: postpone timer %s", f.Node, f.Timer)
	case FilterApp:
		return fmt.Sprintf("%v: postpone app %s", f.Node, f.Type)
	case FilterTransportError:
		return fmt.Sprintf("%v: postpone transport-error from %v", f.Node, f.From)
	}
	return fmt.Sprintf("%v: filter(%d)", f.Node, uint8(f.Kind))
}

// dropVerb names what a message filter does, by its Break.
var dropVerb = map[bool]string{false: "drop", true: "drop+break"}

// Verdict is what the filter does to ev arriving at node at: pass
// (Handle) if it does not match; for a matched message a drop (with Break
// if the filter breaks the connection); for a matched timer, application
// call or transport error a postponement to ev.At plus postpone.
func (f Filter) Verdict(at node.ID, ev node.Event, postpone time.Duration) layer.Verdict {
	if at != f.Node || !f.matches(ev) {
		return layer.Verdict{Handle: true}
	}
	if f.Kind == FilterMessage {
		return layer.Verdict{Break: f.Break}
	}
	return layer.Verdict{RetryAt: ev.At.Add(max(postpone, time.Nanosecond))}
}

// matches reports whether ev is an event f stops, wherever f is
// installed: a message of f's type from f's sender, f's timer, an
// application call of f's type, a transport error about f's peer.
func (f Filter) matches(ev node.Event) bool {
	switch f.Kind {
	case FilterMessage:
		return ev.Kind == node.EventMessage && ev.From == f.From && hasMessageType(ev.Msg, f.Type)
	case FilterTimer:
		return ev.Kind == node.EventTimer && ev.Timer == f.Timer
	case FilterApp:
		return ev.Kind == node.EventApp && hasMessageType(ev.Msg, f.Type)
	case FilterTransportError:
		return ev.Kind == node.EventTransportError && ev.Peer == f.From
	}
	return false
}

// hasMessageType reports whether m is a message of type typ (false for
// no message).
func hasMessageType(m node.Message, typ string) bool { return m != nil && m.MessageType() == typ }

// actionEvent is the event of an action of the actor model that a filter
// may match (ok false for actions no filter matches).
func actionEvent(a consequence.ActorAction) (node.Event, bool) {
	switch a.Kind {
	case consequence.ActDeliver, consequence.ActDeliverDatagram:
		if a.Msg == nil {
			if a.Kind == consequence.ActDeliver {
				// The head of the channel is the error a broken
				// connection left there.
				return node.Event{Kind: node.EventTransportError, Peer: a.Peer}, true
			}
			return node.Event{}, false
		}
		return node.Event{Kind: node.EventMessage, From: a.Peer, Msg: a.Msg}, true
	case consequence.ActTimer:
		return node.Event{Kind: node.EventTimer, Timer: a.Timer}, true
	case consequence.ActApp:
		return node.Event{Kind: node.EventApp, Msg: a.Msg}, true
	}
	return node.Event{}, false
}

// filterFor returns the filter that stops action a at node self, if self
// can stop it: a message or datagram delivered to self, a transport error
// about a peer of self, or a timer or application call of self. Resets,
// breaks and datagram drops are faults, which no filter stops; a message a
// node sends itself is part of the step that sent it.
func filterFor(self node.ID, a consequence.ActorAction, brk func(typ string) bool) (Filter, bool) {
	if a.Node != self {
		return Filter{}, false
	}
	switch a.Kind {
	case consequence.ActDeliver, consequence.ActDeliverDatagram:
		return deliveryFilter(self, a, brk)
	case consequence.ActTimer:
		return Filter{Kind: FilterTimer, Node: self, Timer: a.Timer}, true
	case consequence.ActApp:
		return Filter{Kind: FilterApp, Node: self, Type: a.Msg.MessageType()}, true
	}
	return Filter{}, false
}

// deliveryFilter is filterFor of a delivery a to self: none for a message
// self sent itself or for a datagram channel's empty head; the transport
// error a broken connection left at the head of a channel; else the
// message's, breaking the connection if brk says so for a connection's
// message.
func deliveryFilter(self node.ID, a consequence.ActorAction, brk func(typ string) bool) (Filter, bool) {
	if a.Peer == self {
		return Filter{}, false
	}
	if a.Msg == nil {
		if a.Kind != consequence.ActDeliver {
			return Filter{}, false
		}
		return Filter{Kind: FilterTransportError, Node: self, From: a.Peer}, true
	}
	typ := a.Msg.MessageType()
	return Filter{Kind: FilterMessage, Node: self, From: a.Peer, Type: typ, Break: brk != nil && a.Kind == consequence.ActDeliver && brk(typ)}, true
}

// filterBefore returns the filter that keeps node self from taking a dead
// path past path[step], its critical transition: the filter for that step
// if it is an event of self a filter can stop, else for the latest such
// event of self before it — the one nearest the dead end — and nil if self
// has none. (A safety prediction's filter is the one for the earliest
// event of self instead, the paper's rule: Controller.prediction.)
func filterBefore(self node.ID, path []consequence.ActorAction, step int, brk func(typ string) bool) *Filter {
	for i := min(step, len(path)-1); i >= 0; i-- {
		if f, ok := filterFor(self, path[i], brk); ok {
			return &f
		}
	}
	return nil
}

// firstFilter returns the filter for the earliest event of path node self
// can stop (nil if none): a safety prediction's filter, the paper's rule.
func firstFilter(self node.ID, path []consequence.ActorAction, brk func(typ string) bool) *Filter {
	for _, a := range path {
		if f, ok := filterFor(self, a, brk); ok {
			return &f
		}
	}
	return nil
}

// remoteFilter returns the filter that stops the earliest event of path
// a filter can stop, if that event is another node's and comes before
// every event of self a filter can stop (nil otherwise): the filter a
// steering request asks its owner for.
func remoteFilter(self node.ID, path []consequence.ActorAction, brk func(typ string) bool) *Filter {
	for _, a := range path {
		if a.Node == self {
			if _, ok := filterFor(self, a, brk); ok {
				return nil
			}
			continue
		}
		if f, ok := filterFor(a.Node, a, brk); ok {
			return &f
		}
	}
	return nil
}

// filterSet is a set of filters at one node; the first matching filter
// decides.
type filterSet []Filter

// verdict is the first matching filter's verdict on ev at node at, with
// its index (-1 and pass if none matches).
func (fs filterSet) verdict(at node.ID, ev node.Event, postpone time.Duration) (layer.Verdict, int) {
	for i, f := range fs {
		if v := f.Verdict(at, ev, postpone); !v.Handle {
			return v, i
		}
	}
	return layer.Verdict{Handle: true}, -1
}

// intercept is the set as the explorer's filter (consequence.ActorOptions.Intercept).
func (fs filterSet) intercept(a consequence.ActorAction) layer.Verdict {
	ev, ok := actionEvent(a)
	if !ok {
		return layer.Verdict{Handle: true}
	}
	v, _ := fs.verdict(a.Node, ev, time.Nanosecond)
	return v
}

// with returns fs with f added unless fs has it already.
func (fs filterSet) with(f Filter) filterSet {
	if fs.has(f) {
		return fs
	}
	return append(fs, f)
}

// has reports whether fs holds f.
func (fs filterSet) has(f Filter) bool {
	for _, g := range fs {
		if g == f {
			return true
		}
	}
	return false
}
