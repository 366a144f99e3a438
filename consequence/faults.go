package consequence

import (
	"fmt"
	"math"
	"time"
)

// Faults bound the faults the explorer injects along one path. The zero
// value injects none. What a fault does is what the emulator does (package
// emulation, which follows TCP); see the package documentation, "Resets and
// connections", for the rules.
type Faults struct {
	// Resets is the most node resets along a path. A reset is a local
	// action of the reset node: its state is lost (a fresh service value,
	// Init runs again, timers are gone, the random source carries on), its
	// pending application calls are replaced by its restart calls (see
	// ActorOptions.Workload and node.Restarter), what is in flight to it
	// is lost (except the first messages of a connection a peer opened
	// that have not arrived yet: they reach the new incarnation, as a SYN
	// does), and what it had sent is still delivered. With an RST, every
	// peer holding a connection to it gets a transport error after what
	// the node had sent it, and the peer's writes until then are lost; a
	// silent reset (the RST is lost) leaves the peers stale connections
	// (with StaleConnections; without, they keep working).
	// ResetKinds says which kinds a search explores.
	Resets int
	// ResetKinds are the kinds of reset explored: ResetRST, ResetSilent
	// or both (ResetBoth: two actions per node, the RST one first). Zero
	// means what SilentResets says: silent resets if it is set, else
	// resets with RST, as before ResetKinds existed.
	ResetKinds ResetKinds
	// SilentResets makes resets silent when ResetKinds is zero (the
	// paper's Figure 2 power failure); ResetKinds overrides it.
	SilentResets bool
	// StaleConnections makes a silent reset what TCP and the emulator make
	// of it (see the package documentation, "Resets and connections"):
	// each peer's connection to the reset node goes stale, what the peer
	// had in flight to the node is dropped and answered by an RST, and the
	// peer's next write over an idle one is lost and answered by a
	// transport error. Without it a silent reset is an over-approximation
	// no run does: the peers' connections keep working with the new
	// incarnation, which also receives what was in flight to the node, so
	// the peers may never learn of the reset. Steering rounds set it for
	// their liveness walks (an undetectable reset is a dead end no run
	// reaches); their safety searches leave it off, since it takes a Chord
	// round 2.7 times the states to reach the paper's Figure 10
	// (docs/ARCHITECTURE.md). Resets with RST are always faithful.
	StaleConnections bool
	// Breaks is the most connection breaks along a path. Breaking the open
	// connection between a and b discards the messages in flight both ways
	// and queues a transport error for each end; each end's writes until
	// its transport error arrives are lost (the emulator's broken
	// connection). It is a local action of both ends (two actions with the
	// same successor), so consequence prediction expands it whenever
	// either end shows a new local state: the break that matters is often
	// right after the end with the higher ID changed (the paper's Figure
	// 10).
	Breaks int
	// Drops is the most datagrams dropped along a path. Dropping a datagram
	// in flight from p to n (ActDropDatagram) removes it from the multiset
	// p → n for good: the network lost it, and nobody is told. It is a local
	// action of the receiver n; so that consequence prediction considers a
	// drop whenever there is a new datagram to drop, n's local fingerprint
	// then covers the datagrams in flight to n and the drops spent (which
	// also means n's timers and calls are expanded again when its incoming
	// datagrams change). Datagrams are also lost, outside this budget, when
	// their receiver resets.
	Drops int
	// Refusals is the most sends refused along a path (node.Env.TrySend;
	// the package documentation of node, "Refused sends"); 0, the
	// default, refuses none. A node's refusal window is what its latest
	// step sent with TrySend to another node and is still in its channel,
	// in the order it was sent (a message to itself is never refused: no
	// shell refuses one): a step of the node replaces it, and a message leaves it
	// when it is delivered or lost to a reset or a break. Refusing a
	// message of the window (ActRefuse) removes it from its channel — the
	// messages behind it stay, in order — and steps the sender with
	// node.EventSendRefused. That is what a shell does when it refuses the
	// send: the refused message was never transmitted, and the sender
	// learns of it before any other event of its own. A shell reports the
	// refusals of one step in the order the messages were sent, so a
	// refusal's step keeps what the window held after the refused message
	// (followed by what its handler sends with TrySend) and drops what it
	// held before. It is a local action of the sender; so that consequence
	// prediction considers a refusal whenever there is a new message to
	// refuse, the sender's local fingerprint covers its window and the
	// refusals spent (so its timers and calls are expanded again when its
	// window changes). A service that never calls TrySend has no window:
	// the budget adds no action and no state.
	Refusals int
	// Losses, Duplicates and Reorders bound the delivery faults on the
	// messages a service declares unreliable (node.Spec.Delivery) along a
	// path: messages lost (ActLose), copied to their channel's tail
	// (ActDuplicate), and delivered ahead of earlier messages
	// (ActDeliverAhead, each overtaken message within its declared
	// bound). Each is at most MaxDeliveryFaults; 0, the default, explores
	// none. They are network events, expanded in every state like
	// deliveries; a service that declares nothing explores nothing more.
	Losses, Duplicates, Reorders int
	// Delays is the most messages along a path delivered later than the
	// delay bound of a model with a bounded property
	// (TimelyOptions.MaxDelay): ActDelay makes a channel's head late, so
	// that neither it nor what waits behind it holds the timers back
	// until it is delivered (late.go; a stalled connection). A path that
	// spent one is not judged by the bounded properties,
	// which assume the bound; any message may be delayed, declared or
	// not. At most MaxDeliveryFaults; 0, the default, explores none, and
	// a model without a bounded property has no deadline to lift.
	Delays int
	// Crashes is the most crash-stops along a path (ActCrash; the package
	// documentation, "Lasting faults"): the node goes down and takes no
	// action until it restarts, Downtime of virtual time later, or never.
	Crashes int
	// Downtime is how long a crashed node stays down, in the explorer's
	// virtual time: its restart (ActRestart) is due then and is ordered
	// among the timers like one. Zero: it never restarts (crash-stop).
	Downtime time.Duration
	// Partitions is the most network partitions along a path
	// (ActPartition, of the shapes PartitionKinds names): at most one is
	// in place at a time, for PartitionLength.
	Partitions int
	// PartitionKinds are the shapes of partition explored; zero means
	// every shape (CutAll).
	PartitionKinds CutKinds
	// PartitionLength is how long a partition lasts in virtual time: its
	// heal (ActHeal) is due then, ordered among the timers like one. Zero:
	// it lasts to the end of the path.
	PartitionLength time.Duration
	// ClockJumps is the most clock jumps along a path (ActClockJump): a
	// node's Env.Now jumps forward or back by ClockJump, while its timers
	// keep firing after the delays they were set with.
	ClockJumps int
	// ClockJump is the size of a clock jump; zero means DefaultClockJump.
	ClockJump time.Duration
}

// ResetKinds is a set of kinds of reset (Faults.ResetKinds).
type ResetKinds uint8

// The kinds of reset.
const (
	// ResetRST is a reset whose RST reaches the peers.
	ResetRST ResetKinds = 1 << iota
	// ResetSilent is a reset whose RST is lost (a power failure).
	ResetSilent
	// ResetBoth explores both kinds of reset.
	ResetBoth = ResetRST | ResetSilent
)

// Kinds returns the kinds of reset f explores: ResetKinds, or, when it is
// zero, ResetSilent if SilentResets is set and ResetRST otherwise.
func (f Faults) Kinds() ResetKinds {
	switch {
	case f.ResetKinds != 0:
		return f.ResetKinds
	case f.SilentResets:
		return ResetSilent
	}
	return ResetRST
}

// validate reports a fault budget the model cannot explore.
func (f Faults) validate() error {
	if f.Resets < 0 || f.Breaks < 0 || f.Drops < 0 || f.Refusals < 0 || f.Refusals > math.MaxInt32 {
		return fmt.Errorf("%w: negative fault budget %+v", ErrActorModel, f)
	}
	if err := f.validateDelays(); err != nil {
		return err
	}
	if err := f.validateDelivery(); err != nil {
		return err
	}
	if f.ResetKinds&^ResetBoth != 0 {
		return fmt.Errorf("%w: unknown reset kinds %#x", ErrActorModel, uint8(f.ResetKinds))
	}
	return f.validateLasting()
}

// String returns "rst", "silent", "both" or "none".
func (k ResetKinds) String() string {
	switch k {
	case ResetRST:
		return "rst"
	case ResetSilent:
		return "silent"
	case ResetBoth:
		return "both"
	case 0:
		return "none"
	}
	return fmt.Sprintf("reset-kinds(%#x)", uint8(k))
}

// ParseResetKinds parses the names String returns but "none": "rst",
// "silent" or "both".
func ParseResetKinds(name string) (ResetKinds, error) {
	for _, k := range []ResetKinds{ResetRST, ResetSilent, ResetBoth} {
		if k.String() == name {
			return k, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown reset kinds %q (want rst, silent or both)", ErrInvalidOptions, name)
}
