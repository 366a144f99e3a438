package macetransport

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The messages are msgpack arrays (as_array): no field names on the wire or
// in a checkpoint. Field order is part of the wire format: append new
// fields, never reorder. Every packet travels as a datagram
// (node.Env.SendDatagram): it may be lost, duplicated by retransmission
// and reordered, which is what the transport exists to hide.

// Data is a transport packet carrying one application message. Sequence
// numbers count packets, not bytes: a connection's first packet has the
// connection's initial sequence number (ISN) and the SYN flag, the next
// ISN+1, and so on. There is no three-way handshake: the first data packet
// opens the connection at the receiver. Only a SYN says which connection a
// packet belongs to; a later packet is just a sequence number, which is
// why a receiver that switched connections cannot recognise it.
type Data struct {
	node.Named[Data]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// SYN marks the first packet of a connection: the receiver takes it as
	// the start of a new incoming connection whose ISN is Seq (see
	// Options.FixMonotoneSYN for when it does not).
	SYN bool
	// Seq is the packet's sequence number.
	Seq uint64
	// Conn is the connection identifier, set on a SYN with the correction
	// (Options.FixMonotoneSYN): it increases with every connection the
	// sender opens, across its resets too. Zero without the correction.
	Conn uint64
	// Msg is the application message the packet carries (its identifier:
	// the sender's application numbers its messages 1, 2, ...).
	Msg uint64
}

// String renders the packet as the paper's figure does, "SYN 2001 m1" or
// "DATA 6002 m2", with " conn=ID" when it carries a connection identifier.
func (m Data) String() string {
	kind := "DATA"
	if m.SYN {
		kind = "SYN"
	}
	if m.Conn != 0 {
		return fmt.Sprintf("%s %d m%d conn=%d", kind, m.Seq, m.Msg, m.Conn)
	}
	return fmt.Sprintf("%s %d m%d", kind, m.Seq, m.Msg)
}

// Ack is a cumulative acknowledgment: the receiver has accepted every
// packet of its incoming connection ISN up to and including Seq. A
// receiver sends one for every data packet it gets, accepted or not (a
// duplicate ACK repeats what it has); the sender takes any ACK from the
// peer as a sign of life.
type Ack struct {
	node.Named[Ack]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// ISN names the receiver's current incoming connection.
	ISN uint64
	// Seq is the highest sequence number accepted in order.
	Seq uint64
}

// String renders the ACK as the paper's figure does, "ACK 6001", with the
// connection when Seq is past its first packet: "ACK 6002 (conn 6001)".
func (m Ack) String() string {
	if m.Seq == m.ISN {
		return fmt.Sprintf("ACK %d", m.Seq)
	}
	return fmt.Sprintf("ACK %d (conn %d)", m.Seq, m.ISN)
}

// MaxSendCount bounds SendMessages.Count: a call asking for more is
// ignored (and logged), so a hostile or mistaken call cannot make a node
// queue without bound.
const MaxSendCount = 1000

// SendMessages is the test application's call (MaceMC's Table 1
// "AllAcked" application): send Count messages to To. A call naming the
// node itself, None, or a Count outside 1..MaxSendCount is ignored and
// logged.
type SendMessages struct {
	node.Named[SendMessages]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// To is the destination.
	To node.ID
	// Count is how many messages to send.
	Count int
}

// String renders the call for traces: SendMessages(to=n2 count=2).
func (m SendMessages) String() string {
	return fmt.Sprintf("SendMessages(to=%v count=%d)", m.To, m.Count)
}

// Messages returns a prototype of every message and application call of
// MaceTransport, for node.NewRegistry and node.Spec.
func Messages() []node.Message {
	return []node.Message{Data{}, Ack{}, SendMessages{}}
}
