package paxos

import (
	"cmp"
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Ballot is a proposal number: the paper's "unique round number". Ballots
// are ordered by Round, then by Node, so two proposers never share one and
// every proposer can always pick a ballot above any it has seen. The zero
// Ballot means "none" and is below every real ballot.
type Ballot struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Round is the proposer's round counter, 1 and up.
	Round uint64
	// Node is the proposer that owns the ballot.
	Node node.ID
}

// IsZero reports whether b is the "none" ballot.
func (b Ballot) IsZero() bool { return b.Round == 0 && b.Node == node.None }

// Valid reports whether b can name a real proposal: a positive round owned
// by a node.
func (b Ballot) Valid() bool { return b.Round > 0 && b.Node != node.None }

// Compare orders ballots: -1 if b < o, 0 if equal, +1 if b > o.
func (b Ballot) Compare(o Ballot) int {
	if c := cmp.Compare(b.Round, o.Round); c != 0 {
		return c
	}
	return cmp.Compare(b.Node, o.Node)
}

// Less reports whether b orders before o.
func (b Ballot) Less(o Ballot) bool { return b.Compare(o) < 0 }

// String renders the ballot as round.node, e.g. "2.n3", and the zero ballot
// as "-".
func (b Ballot) String() string {
	if b.IsZero() {
		return "-"
	}
	return fmt.Sprintf("%d.%v", b.Round, b.Node)
}
