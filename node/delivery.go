package node

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// Delivery is how a service's messages (Env.Send, Env.TrySend) may travel,
// as the service declares it: what the service tolerates of its network.
// The zero value is reliable delivery: FIFO per (sender, receiver) pair,
// nothing lost, nothing duplicated, a lost connection reported
// (HandleTransportError) — TCP's contract, which every shell keeps for a
// service that declares nothing.
//
// A declaration widens the world the explorer and the emulator make for
// the declared messages, and nothing else: a message that may be lost may
// vanish on its way without a transport error, the connection staying up
// and the messages behind it still arriving; one that may be duplicated
// may arrive again later (the copy behind the messages sent before it was
// made); one that may be reordered may be overtaken by up to Reordered
// messages sent after it on the same connection (a message overtakes it
// only if its own type may be reordered too). The explorer explores those
// behaviours within its budgets (consequence.Faults: Losses, Duplicates,
// Reorders), the emulator produces them at the rates of its
// emulation.DeliveryConfig. A message to the sender itself, and the first
// message of a connection (which opens it, as a SYN does), always travel
// reliably. The live runtime (package live) keeps sending over TCP: the
// declaration says what the service must survive, not what TCP does.
type Delivery struct {
	// Lost allows the message to be lost silently.
	Lost bool
	// Duplicated allows the message to arrive more than once.
	Duplicated bool
	// Reordered is the most messages sent after this one on the same
	// connection that may arrive before it: 0 (the default) keeps FIFO
	// order, at most MaxReordered.
	Reordered int
}

// MaxReordered bounds Delivery.Reordered: the explorer counts a message's
// overtakers in a byte.
const MaxReordered = 255

// Unreliable returns the delivery of a datagram-like transport: lost,
// duplicated, and overtaken by up to reordered later messages.
func Unreliable(reordered int) Delivery {
	return Delivery{Lost: true, Duplicated: true, Reordered: reordered}
}

// Reliable reports whether d is the zero value: FIFO, exactly once.
func (d Delivery) Reliable() bool { return d == Delivery{} }

// String renders d as "reliable" or, e.g., "lost+duplicated+reordered≤2".
func (d Delivery) String() string {
	if d.Reliable() {
		return "reliable"
	}
	var parts []string
	if d.Lost {
		parts = append(parts, "lost")
	}
	if d.Duplicated {
		parts = append(parts, "duplicated")
	}
	if d.Reordered > 0 {
		parts = append(parts, fmt.Sprintf("reordered≤%d", d.Reordered))
	}
	out := parts[0]
	for _, p := range parts[1:] {
		out += "+" + p
	}
	return out
}

// DeliverySpec is a service's declaration of its messages' delivery
// (Spec.Delivery): one Delivery for every message type, and per message
// type (Message.MessageType) overrides. The zero value declares every
// message reliable.
type DeliverySpec struct {
	// All is the delivery of every message type Types does not name.
	All Delivery
	// Types maps message types to their delivery, overriding All. Every
	// key must name a message of Spec.Messages.
	Types map[string]Delivery
	// MaxDelay is the longest a message is in flight in the deployments
	// the service's bounded properties (Within) promise for: the
	// timeliness a protocol assumes of its network, such as raft's
	// broadcast time well below its election timeout. The explorer
	// keeps every message it delivers within it on the virtual clock
	// (consequence.TimelyOptions); zero leaves the explorer's default,
	// negative is an error. It widens nothing: lost messages stay lost.
	MaxDelay time.Duration
}

// Declared reports whether any message may travel unreliably: false for
// the zero value, which the shells then handle exactly as before
// declarations existed.
func (d DeliverySpec) Declared() bool {
	if !d.All.Reliable() {
		return true
	}
	for _, v := range d.Types {
		if !v.Reliable() {
			return true
		}
	}
	return false
}

// Of returns the delivery of messages of msg's type.
func (d DeliverySpec) Of(msg Message) Delivery {
	if msg == nil {
		return d.All
	}
	return d.OfType(msg.MessageType())
}

// OfType returns the delivery of messages of type typ
// (Message.MessageType).
func (d DeliverySpec) OfType(typ string) Delivery {
	if v, ok := d.Types[typ]; ok {
		return v
	}
	return d.All
}

// validate checks the bounds and that every named type is registered.
func (d DeliverySpec) validate(reg *Registry) error {
	check := func(what string, v Delivery) error {
		if v.Reordered < 0 || v.Reordered > MaxReordered {
			return fmt.Errorf("delivery of %s: Reordered %d, want 0..%d", what, v.Reordered, MaxReordered)
		}
		return nil
	}
	if err := check("every message", d.All); err != nil {
		return err
	}
	if d.MaxDelay < 0 {
		return fmt.Errorf("delivery: negative MaxDelay %v", d.MaxDelay)
	}
	for _, t := range slices.Sorted(maps.Keys(d.Types)) {
		if _, ok := reg.byName[t]; !ok {
			return fmt.Errorf("delivery declared for message type %q, which is not in Spec.Messages", t)
		}
		if err := check(fmt.Sprintf("%q", t), d.Types[t]); err != nil {
			return err
		}
	}
	return nil
}
