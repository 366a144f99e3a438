package chord

import (
	"fmt"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/idspace"
)

// Placement says how a node's ring identifier is derived from its node.ID
// (idspace.Placement: Chord and Pastry place nodes the same way).
type Placement = idspace.Placement

const (
	// PlaceHashed places a node at a 64-bit mix of its ID, truncated to
	// Options.Bits. The default.
	PlaceHashed = idspace.PlaceHashed
	// PlaceByID places a node at its ID modulo 2^Bits, so the ring order
	// is the ID order.
	PlaceByID = idspace.PlaceByID
)

// ParsePlacement parses "hashed" or "by-id".
func ParsePlacement(s string) (Placement, error) {
	p, err := idspace.ParsePlacement(s)
	if err != nil {
		return p, fmt.Errorf("chord: %w", err)
	}
	return p, nil
}

// Options configure a Chord node. The zero value of each parameter means
// "the default"; DefaultOptions is the protocol as the paper ran it, with
// both of its bugs, and Fixed applies the paper's corrections.
type Options struct {
	// Bits is the width of the identifier ring (2^Bits identifiers) and the
	// number of fingers. Default 32, as Mace Chord's SHA32 keys; at most 64.
	Bits int
	// Placement derives ring identifiers from node IDs. Default PlaceHashed.
	Placement Placement
	// MaxSuccessors bounds the successor list. Default 4 (Mace's
	// MAX_SUCCESSORS).
	MaxSuccessors int
	// JoinRetry is how long a joining node waits for a FindPredReply before
	// it asks its bootstrap again. Default 2s.
	JoinRetry time.Duration
	// StabilizeInterval is the period of the stabilize timer, which asks the
	// successor for its predecessor. Default 1s.
	StabilizeInterval time.Duration
	// FixFingersInterval is the period of the fix-fingers timer, which looks
	// up one random finger. Default 2s.
	FixFingersInterval time.Duration
	// RecoveryInterval is the period of the recovery timer, by which a
	// joined node that did not bootstrap the ring looks its own identifier
	// up through its bootstrap (Mace's partition repair). Default 30s.
	RecoveryInterval time.Duration

	// FixSelfPredecessor corrects the paper's first Chord inconsistency
	// (Figure 10, PredSelfImpliesSuccSelf): a node that handles an
	// UpdatePred from itself does not make itself its predecessor while its
	// successor list holds other nodes.
	FixSelfPredecessor bool
	// FixNodeOrdering corrects the second (Figure 11, NodeOrdering): after
	// its successor list or predecessor changes, a node makes the successor
	// that lies between its predecessor and itself (the nearest to itself)
	// its predecessor.
	FixNodeOrdering bool
}

// Defaults for the zero-valued fields of Options.
const (
	DefaultBits               = 32
	DefaultMaxSuccessors      = 4
	DefaultJoinRetry          = 2 * time.Second
	DefaultStabilizeInterval  = time.Second
	DefaultFixFingersInterval = 2 * time.Second
	DefaultRecoveryInterval   = 30 * time.Second
)

// DefaultOptions returns the protocol as the paper describes it: default
// parameters, hashed placement and both bugs present.
func DefaultOptions() Options {
	return Options{
		Bits:               DefaultBits,
		MaxSuccessors:      DefaultMaxSuccessors,
		JoinRetry:          DefaultJoinRetry,
		StabilizeInterval:  DefaultStabilizeInterval,
		FixFingersInterval: DefaultFixFingersInterval,
		RecoveryInterval:   DefaultRecoveryInterval,
	}
}

// AllFixes returns DefaultOptions with every correction applied.
func AllFixes() Options { return DefaultOptions().Fixed() }

// Fixed returns o with every correction applied, parameters unchanged.
func (o Options) Fixed() Options {
	fixes.All(&o)
	return o
}

// withDefaults replaces zero or out-of-range parameters by their defaults,
// so a node never runs on an empty ring or with a timer that spins.
func (o Options) withDefaults() Options {
	if o.Bits <= 0 || o.Bits > 64 {
		o.Bits = DefaultBits
	}
	if o.Placement != PlaceByID {
		o.Placement = PlaceHashed
	}
	if o.MaxSuccessors <= 0 {
		o.MaxSuccessors = DefaultMaxSuccessors
	}
	if o.JoinRetry <= 0 {
		o.JoinRetry = DefaultJoinRetry
	}
	if o.StabilizeInterval <= 0 {
		o.StabilizeInterval = DefaultStabilizeInterval
	}
	if o.FixFingersInterval <= 0 {
		o.FixFingersInterval = DefaultFixFingersInterval
	}
	if o.RecoveryInterval <= 0 {
		o.RecoveryInterval = DefaultRecoveryInterval
	}
	return o
}

// fixes are the corrections, in bug order (node.Fixes reads --fix for
// every service alike).
var fixes = node.Fixes[Options]{Service: "chord", List: []node.Fix[Options]{
	{Name: "self-predecessor", Field: func(o *Options) *bool { return &o.FixSelfPredecessor }},
	{Name: "node-ordering", Field: func(o *Options) *bool { return &o.FixNodeOrdering }},
}}

// FixNames returns the names EnableFix accepts, in bug order, without "all".
func FixNames() []string { return fixes.Names() }

// EnableFix turns on the correction called name: one of FixNames, with or
// without a "fix-" prefix, or "all". It is how command lines and test
// scripts select corrections; an unknown name is an error wrapping
// node.ErrUnknownFix.
func (o *Options) EnableFix(name string) error { return fixes.Enable(o, name) }

// Fixes returns the names of the corrections o enables, in bug order.
func (o Options) Fixes() []string { return fixes.Enabled(o) }

// String renders the options for logs and reports, e.g. "bits=32
// placement=hashed successors=4 join-retry=2s stabilize=1s
// fix-fingers=2s recovery=30s fixes=[node-ordering]".
func (o Options) String() string {
	return fmt.Sprintf("bits=%d placement=%v successors=%d join-retry=%v stabilize=%v fix-fingers=%v recovery=%v fixes=[%s]",
		o.Bits, o.Placement, o.MaxSuccessors, o.JoinRetry, o.StabilizeInterval, o.FixFingersInterval,
		o.RecoveryInterval, strings.Join(o.Fixes(), " "))
}
