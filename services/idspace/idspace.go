// Package idspace is the identifier space of the structured overlays in
// services (Chord's ring, Pastry's circle): 2^bits identifiers with
// arithmetic modulo 2^bits, and the rule that places a node, by its
// node.ID, in it. Both overlays place nodes the same way, so the rule is
// written once here; each re-exports Placement under its own name.
//
// Everything here is a pure function: every node computes every other
// node's identifier from its ID, so messages carry node IDs only.
package idspace

import (
	"errors"
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Placement says how a node's identifier is derived from its node.ID.
type Placement uint8

const (
	// PlaceHashed places a node at node.Mix64 of its ID, truncated to
	// the space's bits: identifiers look random and do not follow ID
	// order, as the papers' hash-derived keys do. The default.
	PlaceHashed Placement = iota
	// PlaceByID places a node at its ID modulo 2^bits, so the order of
	// identifiers is the ID order. Scenario scripts use it to lay nodes
	// out by hand.
	PlaceByID
)

// ErrUnknownPlacement is returned by ParsePlacement for a name it does
// not know.
var ErrUnknownPlacement = errors.New("idspace: unknown placement")

// String returns "hashed" or "by-id".
func (p Placement) String() string {
	switch p {
	case PlaceHashed:
		return "hashed"
	case PlaceByID:
		return "by-id"
	}
	return fmt.Sprintf("placement(%d)", uint8(p))
}

// ParsePlacement parses "hashed", "by-id" or "id"; any other name is an
// error wrapping ErrUnknownPlacement.
func ParsePlacement(s string) (Placement, error) {
	switch s {
	case "hashed":
		return PlaceHashed, nil
	case "by-id", "id":
		return PlaceByID, nil
	}
	return 0, fmt.Errorf("%w %q (want hashed or by-id)", ErrUnknownPlacement, s)
}

// Mask returns 2^bits − 1, the mask of a space of bits bits (all ones
// for 64 or more).
func Mask(bits int) uint64 {
	if bits >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(bits) - 1
}

// Place returns the identifier of node id under p in the space of mask
// (Mask).
func (p Placement) Place(id node.ID, mask uint64) uint64 {
	if p == PlaceByID {
		return uint64(id) & mask
	}
	return node.Mix64(uint64(id)) & mask
}
