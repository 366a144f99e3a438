package bullet

import (
	"fmt"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Options configure a Bullet′ node. The zero value of each field means its
// default; a negative value is an error (Validate), which NewSpec replaces
// by the default. DefaultOptions is the protocol as the paper ran it, with
// its bug; Fixed applies the correction.
type Options struct {
	// Blocks is the number of blocks of the file. Default 1280 (with the
	// default BlockSize, the paper's 20 MB file).
	Blocks int
	// BlockSize is the size of a block in bytes: a Block message carries a
	// payload of this many bytes, so it costs its size on an emulated
	// link. Default 16384 (16 KiB).
	BlockSize int
	// MaxSenders bounds the peers a node downloads from. Default 6.
	MaxSenders int
	// MaxReceivers bounds the peers a node serves (announces its file map
	// to and answers requests from). Default 6.
	MaxReceivers int
	// MaxOutstanding bounds the block requests a receiver has outstanding
	// at one sender. Default 5: five 16 KiB blocks are more than the
	// emulator's default 64 KiB send queue holds, so a sender's queue to a
	// receiver can fill with blocks and refuse a diff, as the paper's
	// transport did (with 3, 48 KiB, no diff is ever refused there).
	MaxOutstanding int
	// PushFanout is the number of nodes the source pushes the file to, one
	// block at a time round-robin: the first PushFanout nodes to join.
	// Default 5.
	PushFanout int
	// SampleSize is the number of members the source returns in a Sample
	// (the discovery's random subset). Default 6.
	SampleSize int
	// DiscoverInterval is the period at which a node asks the source for a
	// fresh sample of members. Default 5s.
	DiscoverInterval time.Duration
	// PeerInterval is the period of the peering timer, which replaces a
	// sender that has nothing more to offer and asks a new peer to become
	// a sender. Default 1s.
	PeerInterval time.Duration
	// DiffInterval is the period at which a sender sends each receiver the
	// diff of its file map since the last diff (its shadow file map).
	// Default 250ms.
	DiffInterval time.Duration
	// PushInterval is the time between two blocks the source pushes.
	// Default 150ms (a 16 KiB block takes 131 ms on a 1 Mb/s uplink).
	PushInterval time.Duration

	// FixKeepShadow corrects the paper's bug (§5.2.3): a diff the
	// transport refuses puts its blocks back in the receiver's shadow file
	// map, to be sent with the next diff. Without it the shadow is
	// cleared, and the receiver never learns of those blocks.
	FixKeepShadow bool
}

// Defaults for the zero-valued fields of Options.
const (
	DefaultBlocks           = 1280
	DefaultBlockSize        = 16 << 10
	DefaultMaxSenders       = 6
	DefaultMaxReceivers     = 6
	DefaultMaxOutstanding   = 5
	DefaultPushFanout       = 5
	DefaultSampleSize       = 6
	DefaultDiscoverInterval = 5 * time.Second
	DefaultPeerInterval     = time.Second
	DefaultDiffInterval     = 250 * time.Millisecond
	DefaultPushInterval     = 150 * time.Millisecond
)

// Bounds of Options.Blocks and BlockSize, so that every message fits a
// live frame (live.DefaultMaxFrameSize, 1 MiB): a full Diff of MaxBlocks
// blocks is under 200 KiB, a Block under 513 KiB.
const (
	MaxBlocks    = 1 << 16
	MaxBlockSize = 512 << 10
)

// DefaultOptions returns the protocol as the paper describes it: default
// parameters and the bug present.
func DefaultOptions() Options {
	return Options{
		Blocks:           DefaultBlocks,
		BlockSize:        DefaultBlockSize,
		MaxSenders:       DefaultMaxSenders,
		MaxReceivers:     DefaultMaxReceivers,
		MaxOutstanding:   DefaultMaxOutstanding,
		PushFanout:       DefaultPushFanout,
		SampleSize:       DefaultSampleSize,
		DiscoverInterval: DefaultDiscoverInterval,
		PeerInterval:     DefaultPeerInterval,
		DiffInterval:     DefaultDiffInterval,
		PushInterval:     DefaultPushInterval,
	}
}

// AllFixes returns DefaultOptions with the correction applied.
func AllFixes() Options { return DefaultOptions().Fixed() }

// Fixed returns o with every correction applied, parameters unchanged.
func (o Options) Fixed() Options {
	fixes.All(&o)
	return o
}

// Validate reports a negative or out-of-range parameter (zero is always
// valid: it stands for the default).
func (o Options) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{
		{"blocks", o.Blocks}, {"block size", o.BlockSize}, {"max senders", o.MaxSenders},
		{"max receivers", o.MaxReceivers}, {"max outstanding", o.MaxOutstanding},
		{"push fanout", o.PushFanout}, {"sample size", o.SampleSize},
	} {
		if f.v < 0 {
			return fmt.Errorf("bullet: negative %s %d", f.name, f.v)
		}
	}
	if o.Blocks > MaxBlocks {
		return fmt.Errorf("bullet: %d blocks, more than %d", o.Blocks, MaxBlocks)
	}
	if o.BlockSize > MaxBlockSize {
		return fmt.Errorf("bullet: block size %d, more than %d", o.BlockSize, MaxBlockSize)
	}
	if o.DiscoverInterval < 0 || o.PeerInterval < 0 || o.DiffInterval < 0 || o.PushInterval < 0 {
		return fmt.Errorf("bullet: negative interval (discover %v, peer %v, diff %v, push %v)",
			o.DiscoverInterval, o.PeerInterval, o.DiffInterval, o.PushInterval)
	}
	return nil
}

// withDefaults replaces zero or invalid parameters by their defaults, so a
// node never runs with an empty file or a timer that spins.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	ints := []struct{ v, d *int }{
		{&o.Blocks, &d.Blocks}, {&o.BlockSize, &d.BlockSize}, {&o.MaxSenders, &d.MaxSenders},
		{&o.MaxReceivers, &d.MaxReceivers}, {&o.MaxOutstanding, &d.MaxOutstanding},
		{&o.PushFanout, &d.PushFanout}, {&o.SampleSize, &d.SampleSize},
	}
	for _, f := range ints {
		if *f.v <= 0 {
			*f.v = *f.d
		}
	}
	if o.Blocks > MaxBlocks {
		o.Blocks = d.Blocks
	}
	if o.BlockSize > MaxBlockSize {
		o.BlockSize = d.BlockSize
	}
	durs := []struct{ v, d *time.Duration }{
		{&o.DiscoverInterval, &d.DiscoverInterval}, {&o.PeerInterval, &d.PeerInterval},
		{&o.DiffInterval, &d.DiffInterval}, {&o.PushInterval, &d.PushInterval},
	}
	for _, f := range durs {
		if *f.v <= 0 {
			*f.v = *f.d
		}
	}
	return o
}

// fixes are the corrections, in bug order (node.Fixes reads --fix for
// every service alike).
var fixes = node.Fixes[Options]{Service: "bullet", List: []node.Fix[Options]{
	{Name: "keep-shadow", Field: func(o *Options) *bool { return &o.FixKeepShadow }},
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

// String renders the options for logs and reports, e.g. "blocks=1280x16384
// senders=6 receivers=6 outstanding=5 fanout=5 sample=6 discover=5s
// peer=1s diff=250ms push=150ms fixes=[]".
func (o Options) String() string {
	return fmt.Sprintf("blocks=%dx%d senders=%d receivers=%d outstanding=%d fanout=%d sample=%d discover=%v peer=%v diff=%v push=%v fixes=[%s]",
		o.Blocks, o.BlockSize, o.MaxSenders, o.MaxReceivers, o.MaxOutstanding, o.PushFanout, o.SampleSize,
		o.DiscoverInterval, o.PeerInterval, o.DiffInterval, o.PushInterval, strings.Join(o.Fixes(), " "))
}
