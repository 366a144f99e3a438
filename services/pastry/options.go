package pastry

import (
	"fmt"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/idspace"
)

// Placement says how a node's Pastry identifier is derived from its node.ID
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
		return p, fmt.Errorf("pastry: %w", err)
	}
	return p, nil
}

// Options configure a Pastry node. The zero value of each parameter means
// "the default"; DefaultOptions is the protocol with MaceMC's rapid-rejoin
// bug, and Fixed applies the correction. Validate rejects negative or
// inconsistent values; NewSpec replaces them by the defaults.
type Options struct {
	// Bits is the width of the identifier space (2^Bits identifiers).
	// Default 16; at most 64, a multiple of DigitBits.
	Bits int
	// DigitBits is the width of one digit (Pastry's b): identifiers are
	// read as Bits/DigitBits digits of base 2^DigitBits, and the routing
	// table has one row per digit and 2^DigitBits columns. Default 2
	// (base 4: 8 digits of a 16-bit identifier); at most 8.
	DigitBits int
	// Placement derives identifiers from node IDs. Default PlaceHashed.
	Placement Placement
	// LeafSize is L, the size of the leaf set: the L/2 numerically nearest
	// known nodes on each side. Default 4; it must be even.
	LeafSize int
	// JoinRetry is how long a joining node waits for a JoinReply before it
	// sends its Join to the bootstrap again. Default 2s.
	JoinRetry time.Duration
	// ProbeInterval is the period of the probe timer, which probes every
	// known node (leaf set and routing table). Default 1s.
	ProbeInterval time.Duration
	// MissLimit is how many consecutive probes a node may leave unanswered:
	// at the probe round after its MissLimit-th unanswered probe it is
	// purged. Default 2 (a node is declared failed after three probe
	// periods of silence).
	MissLimit int

	// FixRapidRejoin corrects MaceMC's Pastry bug: a node never routes a
	// Join to the joiner itself, and drops the joiner's entry (its previous
	// incarnation) when it handles the joiner's Join.
	FixRapidRejoin bool
}

// Defaults for the zero-valued fields of Options.
const (
	DefaultBits          = 16
	DefaultDigitBits     = 2
	DefaultLeafSize      = 4
	DefaultJoinRetry     = 2 * time.Second
	DefaultProbeInterval = time.Second
	DefaultMissLimit     = 2
)

// DefaultOptions returns the protocol with MaceMC's bug: default
// parameters, hashed placement, no correction.
func DefaultOptions() Options {
	return Options{
		Bits:          DefaultBits,
		DigitBits:     DefaultDigitBits,
		LeafSize:      DefaultLeafSize,
		JoinRetry:     DefaultJoinRetry,
		ProbeInterval: DefaultProbeInterval,
		MissLimit:     DefaultMissLimit,
	}
}

// AllFixes returns DefaultOptions with every correction applied.
func AllFixes() Options { return DefaultOptions().Fixed() }

// Fixed returns o with every correction applied, parameters unchanged.
func (o Options) Fixed() Options {
	fixes.All(&o)
	return o
}

// Validate reports a negative or inconsistent parameter (zero is always
// valid: it stands for the default).
func (o Options) Validate() error {
	switch {
	case o.Bits < 0 || o.Bits > 64:
		return fmt.Errorf("pastry: bits %d out of range (0..64)", o.Bits)
	case o.DigitBits < 0 || o.DigitBits > 8:
		return fmt.Errorf("pastry: digit bits %d out of range (0..8)", o.DigitBits)
	case o.LeafSize < 0 || o.LeafSize%2 != 0:
		return fmt.Errorf("pastry: leaf set size %d must be even and not negative", o.LeafSize)
	case o.JoinRetry < 0 || o.ProbeInterval < 0:
		return fmt.Errorf("pastry: negative interval (join retry %v, probe %v)", o.JoinRetry, o.ProbeInterval)
	case o.MissLimit < 0:
		return fmt.Errorf("pastry: negative miss limit %d", o.MissLimit)
	}
	bits, digit := o.Bits, o.DigitBits
	if bits == 0 {
		bits = DefaultBits
	}
	if digit == 0 {
		digit = DefaultDigitBits
	}
	if bits%digit != 0 {
		return fmt.Errorf("pastry: bits %d is not a multiple of digit bits %d", bits, digit)
	}
	return nil
}

// withDefaults replaces zero or invalid parameters by their defaults, so a
// node never runs with an empty leaf set, a ragged digit or a timer that
// spins.
func (o Options) withDefaults() Options {
	if o.Bits <= 0 || o.Bits > 64 {
		o.Bits = DefaultBits
	}
	if o.DigitBits <= 0 || o.DigitBits > 8 || o.Bits%o.DigitBits != 0 {
		o.DigitBits = DefaultDigitBits
		if o.Bits%o.DigitBits != 0 {
			o.DigitBits = 1
		}
	}
	if o.Placement != PlaceByID {
		o.Placement = PlaceHashed
	}
	if o.LeafSize <= 0 || o.LeafSize%2 != 0 {
		o.LeafSize = DefaultLeafSize
	}
	if o.JoinRetry <= 0 {
		o.JoinRetry = DefaultJoinRetry
	}
	if o.ProbeInterval <= 0 {
		o.ProbeInterval = DefaultProbeInterval
	}
	if o.MissLimit <= 0 {
		o.MissLimit = DefaultMissLimit
	}
	return o
}

// fixes are the corrections, in bug order (node.Fixes reads --fix for
// every service alike).
var fixes = node.Fixes[Options]{Service: "pastry", List: []node.Fix[Options]{
	{Name: "rapid-rejoin", Field: func(o *Options) *bool { return &o.FixRapidRejoin }},
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

// String renders the options for logs and reports, e.g. "bits=16 digit=2
// placement=hashed leaves=4 join-retry=2s probe=1s misses=2
// fixes=[rapid-rejoin]".
func (o Options) String() string {
	return fmt.Sprintf("bits=%d digit=%d placement=%v leaves=%d join-retry=%v probe=%v misses=%d fixes=[%s]",
		o.Bits, o.DigitBits, o.Placement, o.LeafSize, o.JoinRetry, o.ProbeInterval, o.MissLimit,
		strings.Join(o.Fixes(), " "))
}
