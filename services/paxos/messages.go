package paxos

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The messages are msgpack arrays (as_array): no field names on the wire or
// in a checkpoint. Field order is therefore part of the wire format: append
// new fields, never reorder.

// Prepare is step 1: a proposer asks every acceptor to promise to ignore
// ballots below Ballot.
type Prepare struct {
	node.Named[Prepare]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Ballot is the proposer's new ballot; its Node is the sender.
	Ballot Ballot
}

// String renders the message for traces: Prepare(2.n3).
func (m Prepare) String() string { return fmt.Sprintf("Prepare(%v)", m.Ballot) }

// Promise is step 2: an acceptor's answer to a Prepare whose ballot is above
// every ballot it promised before. It carries the last proposal the
// acceptor accepted, if any, which the proposer must adopt.
type Promise struct {
	node.Named[Promise]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Ballot is the ballot promised (the Prepare's).
	Ballot Ballot
	// Accepted is the ballot of the acceptor's last accepted proposal; zero
	// when it has accepted none.
	Accepted Ballot
	// Value is the value accepted at Accepted; empty when none.
	Value string
}

// String renders the message for traces: Promise(2.n3 accepted=1.n1:"A").
func (m Promise) String() string {
	if m.Accepted.IsZero() {
		return fmt.Sprintf("Promise(%v accepted=-)", m.Ballot)
	}
	return fmt.Sprintf("Promise(%v accepted=%v:%q)", m.Ballot, m.Accepted, m.Value)
}

// Accept is step 3: once a majority promised, the proposer asks every
// acceptor to accept Value at Ballot.
type Accept struct {
	node.Named[Accept]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	Ballot   Ballot
	Value    string
}

// String renders the message for traces: Accept(2.n3 "C").
func (m Accept) String() string { return fmt.Sprintf("Accept(%v %q)", m.Ballot, m.Value) }

// Learn is step 4: an acceptor that accepted Value at Ballot tells every
// learner. A learner that hears it from a majority at the same ballot
// considers Value chosen (step 5).
type Learn struct {
	node.Named[Learn]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	Ballot   Ballot
	Value    string
}

// String renders the message for traces: Learn(2.n3 "C").
func (m Learn) String() string { return fmt.Sprintf("Learn(%v %q)", m.Ballot, m.Value) }

// Propose is the application call that makes the node propose Value: it
// becomes the node's proposal and the node starts a ballot for it. The call
// is ignored when Value is empty, when the node has already learned a value
// and when it is already proposing.
type Propose struct {
	node.Named[Propose]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	Value    string
}

// String renders the call for traces: Propose("A").
func (m Propose) String() string { return fmt.Sprintf("Propose(%q)", m.Value) }

// Messages returns a prototype of every message and application call of
// Paxos, for node.NewRegistry and node.Spec.
func Messages() []node.Message {
	return []node.Message{Prepare{}, Promise{}, Accept{}, Learn{}, Propose{}}
}
