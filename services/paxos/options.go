package paxos

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Options configure a Paxos node. The zero value is correct Paxos among
// nodes n1, n2 and n3 (the paper's three-node setup): no bug is injected,
// and zero parameters take their defaults. The two bugs of the paper's
// §5.4.2 are opt-in, one flag each (EnableBug names them "bug1" and
// "bug2").
type Options struct {
	// Members are the nodes that take part: every member is proposer,
	// acceptor and learner, and a majority is more than half of them.
	// Order and duplicates do not matter. Empty means DefaultMembers. A
	// node outside Members takes no part: acceptors ignore its ballots and
	// nobody sends it a Learn.
	Members []node.ID
	// RetryTimeout is how long a proposer waits for its value to be chosen
	// before it starts a new ballot; each wait is drawn uniformly from
	// [RetryTimeout, 2·RetryTimeout) from the node's random source, so
	// duelling proposers drift apart. Default 2s.
	RetryTimeout time.Duration
	// Proposers, when non-empty, are the members that propose: a Propose
	// call at any other node is ignored and AppCalls declares none there,
	// so the other members are acceptors and learners only. They are then
	// interchangeable, and the service declares them a symmetry group
	// (SymmetryGroups). Empty means every member proposes, as in the
	// paper. Order, duplicates and non-members do not matter.
	Proposers []node.ID

	// BugLastPromise injects bug1: once a majority promised, the proposer
	// builds its Accept from the value of the last Promise it received
	// instead of the one with the highest accepted ballot (the error the
	// paper takes from [28]).
	BugLastPromise bool
	// BugVolatileAcceptor injects bug2: an acceptor does not keep its
	// promise and accepted proposal on stable storage, so a reset forgets
	// them (the paper's error inspired by [4]).
	BugVolatileAcceptor bool
}

// Defaults for the zero-valued fields of Options.
const DefaultRetryTimeout = 2 * time.Second

// DefaultMembers returns the members used when Options.Members is empty:
// n1, n2 and n3, the paper's nodes A, B and C.
func DefaultMembers() []node.ID { return []node.ID{1, 2, 3} }

// WithBugs returns o with both of the paper's bugs injected.
func (o Options) WithBugs() Options {
	o.BugLastPromise = true
	o.BugVolatileAcceptor = true
	return o
}

// withDefaults fills in the defaults and normalises Members to an
// ascending, duplicate-free list without None, owned by the result.
func (o Options) withDefaults() Options {
	var members []node.ID
	for _, id := range o.Members {
		if id != node.None {
			members = append(members, id)
		}
	}
	slices.Sort(members)
	o.Members = slices.Compact(members)
	if len(o.Members) == 0 {
		o.Members = DefaultMembers()
	}
	var proposers []node.ID
	for _, id := range o.Proposers {
		if o.isMember(id) {
			proposers = append(proposers, id)
		}
	}
	slices.Sort(proposers)
	o.Proposers = slices.Compact(proposers)
	if o.RetryTimeout <= 0 {
		o.RetryTimeout = DefaultRetryTimeout
	}
	return o
}

// majority is the smallest number of members that is more than half.
func (o Options) majority() int { return len(o.Members)/2 + 1 }

// isMember reports whether id takes part (o must have its defaults).
func (o Options) isMember(id node.ID) bool {
	_, ok := slices.BinarySearch(o.Members, id)
	return ok
}

// isProposer reports whether member id may propose (o must have its
// defaults).
func (o Options) isProposer(id node.ID) bool {
	if !o.isMember(id) {
		return false
	}
	if len(o.Proposers) == 0 {
		return true
	}
	_, ok := slices.BinarySearch(o.Proposers, id)
	return ok
}

// mayPropose reports whether a Propose at id starts a ballot: anywhere
// (members or not, as without Proposers) unless Proposers is set.
func (o Options) mayPropose(id node.ID) bool {
	if len(o.Proposers) == 0 {
		return true
	}
	_, ok := slices.BinarySearch(o.Proposers, id)
	return ok
}

// bugFlag binds a bug's command-line name to its field.
type bugFlag struct {
	name  string
	field func(*Options) *bool
}

var bugFlags = [...]bugFlag{
	{"bug1", func(o *Options) *bool { return &o.BugLastPromise }},
	{"bug2", func(o *Options) *bool { return &o.BugVolatileAcceptor }},
}

// BugNames returns the names EnableBug and EnableFix accept, in the
// paper's order, without "all".
func BugNames() []string {
	names := make([]string, len(bugFlags))
	for i, b := range bugFlags {
		names[i] = b.name
	}
	return names
}

// FixNames returns the names EnableFix accepts: a fix is named after the
// bug it removes, so it is BugNames.
func FixNames() []string { return BugNames() }

// EnableBug injects the bug called name: one of BugNames, or "all". It is
// how command lines and test scripts select bugs.
func (o *Options) EnableBug(name string) error {
	return o.setBug(name, true)
}

// EnableFix removes the bug called name (one of FixNames, with or without a
// "fix-" prefix, or "all"): the paper's correction of that bug. It is for
// callers that start from the buggy configuration (WithBugs), as the CLI
// does.
func (o *Options) EnableFix(name string) error {
	return o.setBug(strings.TrimPrefix(name, "fix-"), false)
}

func (o *Options) setBug(name string, on bool) error {
	if name == "all" {
		for _, b := range bugFlags {
			*b.field(o) = on
		}
		return nil
	}
	for _, b := range bugFlags {
		if b.name == name {
			*b.field(o) = on
			return nil
		}
	}
	return fmt.Errorf("paxos: unknown bug %q (want one of %s or all)", name, strings.Join(BugNames(), ", "))
}

// Bugs returns the names of the bugs o injects, in the paper's order.
func (o Options) Bugs() []string {
	var out []string
	for _, b := range bugFlags {
		if *b.field(&o) {
			out = append(out, b.name)
		}
	}
	return out
}

// String renders the options for logs and reports, e.g.
// "members=[n1 n2 n3] retry=2s bugs=[bug1]" (and " proposers=[n1]" when
// Proposers is set).
func (o Options) String() string {
	o = o.withDefaults()
	out := fmt.Sprintf("members=%v retry=%v bugs=[%s]", o.Members, o.RetryTimeout, strings.Join(o.Bugs(), " "))
	if len(o.Proposers) > 0 {
		out += fmt.Sprintf(" proposers=%v", o.Proposers)
	}
	return out
}
