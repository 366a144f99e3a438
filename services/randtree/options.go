package randtree

import (
	"fmt"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Options configure a RandTree node. The zero value of each field means "the
// default"; DefaultOptions is the protocol as the paper ran it, with all of
// its bugs, and Fixed applies the paper's corrections.
type Options struct {
	// MaxChildren bounds a node's children; a full node passes joins down
	// to a random child. Default 3.
	MaxChildren int
	// JoinRetry is how long a joining node waits for a JoinReply before it
	// sends Join to its next bootstrap target. Default 2s.
	JoinRetry time.Duration
	// RecoveryInterval is the period of the recovery timer, which probes
	// peers outside the node's neighbourhood for a more eligible root.
	// Default 5s.
	RecoveryInterval time.Duration

	// FixUpdateSibling corrects bug 1 (ChildrenSiblingsDisjoint, the paper's
	// Figure 2): UpdateSibling removes the new sibling from the children.
	FixUpdateSibling bool
	// FixNewRootChild corrects bug 2 (RootNotChildOrSibling, Figure 9):
	// installing a new root removes it from the children and siblings.
	FixNewRootChild bool
	// FixRootSiblings corrects bug 3 (RootHasNoSiblings): the sibling list
	// is cleared whenever the node's parent gives up the root position and
	// when the node promotes itself to root after losing its parent, and
	// replaced by the new root's other children when the node completes
	// handing the root position over.
	FixRootSiblings bool
	// FixRecoveryTimer corrects bug 4 (RecoveryTimerRuns): the recovery
	// timer runs on every joined node, even with an empty peer list.
	FixRecoveryTimer bool
	// FixAcceptSibling corrects a variation of bug 1 that the paper
	// mentions ("variations of this bug that require changes in other
	// handlers"): a full root passes a rejoining node down to a child that
	// still lists it as a sibling, and the child accepts it. With the fix,
	// accepting a child removes it from the sibling list.
	FixAcceptSibling bool
	// FixJoinReplyInInit corrects the liveness bug MaceMC found: a node in
	// Init that gets a JoinReply answers Remove, so the would-be parent
	// does not keep it as a child forever.
	FixJoinReplyInInit bool
	// FixStaleChild corrects the stale child that MaceMC's RandTree kept:
	// a joined node that gets a parent's Keepalive from a node it does not
	// hold as its parent answers Disown, so the stale parent drops it. The
	// paper's code has no such check (a parent trusts that a child whose
	// TCP connection did not break still holds it), so a child that reset
	// silently and whose new incarnation holds a healthy connection to the
	// old parent — it got the old parent's JoinReply in Init, or rejoined
	// elsewhere and later talked to it — stays that parent's child
	// forever. The parent-side check (a Keepalive from a child the node
	// does not hold is answered with Disown) is not a correction: it is
	// always on.
	FixStaleChild bool
}

// Defaults for the zero-valued fields of Options.
const (
	DefaultMaxChildren      = 3
	DefaultJoinRetry        = 2 * time.Second
	DefaultRecoveryInterval = 5 * time.Second
)

// DefaultOptions returns the protocol as the paper describes it: default
// parameters and every bug present.
func DefaultOptions() Options {
	return Options{
		MaxChildren:      DefaultMaxChildren,
		JoinRetry:        DefaultJoinRetry,
		RecoveryInterval: DefaultRecoveryInterval,
	}
}

// AllFixes returns DefaultOptions with every correction applied.
func AllFixes() Options { return DefaultOptions().Fixed() }

// Fixed returns o with every correction applied, parameters unchanged.
func (o Options) Fixed() Options {
	fixes.All(&o)
	return o
}

// withDefaults replaces zero or negative parameters by their defaults, so a
// node never runs with a degree bound of zero or a timer that spins.
func (o Options) withDefaults() Options {
	if o.MaxChildren <= 0 {
		o.MaxChildren = DefaultMaxChildren
	}
	if o.JoinRetry <= 0 {
		o.JoinRetry = DefaultJoinRetry
	}
	if o.RecoveryInterval <= 0 {
		o.RecoveryInterval = DefaultRecoveryInterval
	}
	return o
}

// fixes are the corrections, in bug order (node.Fixes reads --fix for
// every service alike).
var fixes = node.Fixes[Options]{Service: "randtree", List: []node.Fix[Options]{
	{Name: "update-sibling", Field: func(o *Options) *bool { return &o.FixUpdateSibling }},
	{Name: "new-root-child", Field: func(o *Options) *bool { return &o.FixNewRootChild }},
	{Name: "root-siblings", Field: func(o *Options) *bool { return &o.FixRootSiblings }},
	{Name: "recovery-timer", Field: func(o *Options) *bool { return &o.FixRecoveryTimer }},
	{Name: "accept-sibling", Field: func(o *Options) *bool { return &o.FixAcceptSibling }},
	{Name: "join-reply-in-init", Field: func(o *Options) *bool { return &o.FixJoinReplyInInit }},
	{Name: "stale-child", Field: func(o *Options) *bool { return &o.FixStaleChild }},
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

// String renders the options for logs and reports, e.g.
// "max-children=3 join-retry=2s recovery=5s fixes=[update-sibling]".
func (o Options) String() string {
	return fmt.Sprintf("max-children=%d join-retry=%v recovery=%v fixes=[%s]",
		o.MaxChildren, o.JoinRetry, o.RecoveryInterval, strings.Join(o.Fixes(), " "))
}
