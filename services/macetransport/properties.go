package macetransport

import (
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/viewstate"
	"github.com/seed6eee2ec7/crystalball/services/internal/violation"
)

// Property names.
const (
	// InOrderDelivery (safety): on every incoming connection, the
	// application got the sender's messages in the order they were sent,
	// without gaps: each message delivered is the one after the previous
	// one (the sender numbers its messages 1, 2, ... and resends what was
	// not acknowledged, in order, on a new connection).
	InOrderDelivery = "InOrderDelivery"
	// NoDuplicateDelivery (safety): no message is delivered twice on the
	// same incoming connection. (A message resent on a new connection after
	// an error may be delivered once more there: the transport promises
	// duplicate suppression within a connection.)
	NoDuplicateDelivery = "NoDuplicateDelivery"
	// DeliveredWasSent (safety): on a connection both ends hold (the
	// sender's current outgoing connection to the receiver has the ISN and
	// identifier of the receiver's incoming one), the receiver never
	// accepted a sequence number the sender has not sent. Without the
	// correction a sender that reset reuses ISN 2001, and a receiver that
	// still holds the old incarnation's connection cannot tell the two
	// apart: this property then flags it.
	DeliveredWasSent = "DeliveredWasSent"

	// AllAcked (liveness, MaceMC's Table 1): eventually every message the
	// application sent is acknowledged — no node holds an unacknowledged
	// message. A connection that fails is no excuse: the application
	// resends on a new one.
	AllAcked = "AllAcked"
)

// SafetyProperties returns MaceTransport's safety properties.
//
// Every check evaluates only the nodes the view holds (a neighbourhood
// snapshot is partial), judges DeliveredWasSent only when the sender is in
// the view and holds the same connection, does not allocate when the property holds, and on a violation
// names every offending connection, e.g. "n2: from n1 (conn 2001): m3
// after m1".
func SafetyProperties() []node.Property {
	return []node.Property{
		node.Always(InOrderDelivery, checkInOrder),
		node.Always(NoDuplicateDelivery, checkNoDuplicate),
		node.Always(DeliveredWasSent, checkDeliveredWasSent),
	}
}

// LivenessProperties returns MaceTransport's liveness property, AllAcked.
func LivenessProperties() []node.Property {
	return []node.Property{node.Eventually(AllAcked, checkAllAcked)}
}

// Properties returns the safety then the liveness properties.
func Properties() []node.Property {
	return append(SafetyProperties(), LivenessProperties()...)
}

func checkInOrder(v node.View) error {
	var vs violation.List
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		if s == nil {
			continue
		}
		for _, c := range s.In {
			for k := 1; k < len(c.Delivered); k++ {
				if prev, m := c.Delivered[k-1], c.Delivered[k]; m != prev && m != prev+1 {
					vs.Add("%v: from %v (conn %d): m%d after m%d", id, c.Peer, c.ISN, m, prev)
				}
			}
		}
	}
	return vs.Err()
}

func checkNoDuplicate(v node.View) error {
	var vs violation.List
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		if s == nil {
			continue
		}
		for _, c := range s.In {
			for k, m := range c.Delivered {
				for _, earlier := range c.Delivered[:k] {
					if earlier == m {
						vs.Add("%v: from %v (conn %d): m%d delivered twice", id, c.Peer, c.ISN, m)
						break
					}
				}
			}
		}
	}
	return vs.Err()
}

func checkDeliveredWasSent(v node.View) error {
	var vs violation.List
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		if s == nil {
			continue
		}
		for _, c := range s.In {
			sender := viewstate.Of[*State](v, c.Peer)
			if sender == nil {
				continue
			}
			i := sender.outIndex(id)
			if i < 0 || sender.Out[i].ISN != c.ISN || sender.Out[i].Conn != c.Conn {
				continue // not the connection the sender holds: nothing to compare
			}
			if sent := sender.Out[i].Sent; c.Next > sent {
				vs.Add("%v: from %v (conn %d): accepted up to %d but %v sent up to %d", id, c.Peer, c.ISN, c.Next-1, c.Peer, sent-1)
			}
		}
	}
	return vs.Err()
}

func checkAllAcked(v node.View) error {
	var vs violation.List
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		if s == nil {
			continue
		}
		for _, c := range s.Out {
			if len(c.Queue) > 0 {
				vs.Add("%v: to %v (conn %d): %s unacknowledged", id, c.Peer, c.ISN, formatMsgs(c.Queue))
			}
		}
	}
	return vs.Err()
}
