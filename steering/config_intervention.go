package steering

import (
	"cmp"
	"fmt"
	"time"
)

// InterventionPolicy is how an event steering stops is kept from the
// node's handler, which filters stay in force, and what a restart keeps.
type InterventionPolicy struct {
	// PostponeDelay is how long a filtered or vetoed timer, application
	// call or transport error is put off (layer.Verdict.RetryAt) before
	// the shell delivers it again (default DefaultPostponeDelay).
	PostponeDelay time.Duration
	// BreakConnection makes every message filter and immediate-check veto
	// break the connection to the sender — the paper's TCP reset — even
	// for a message type the service declares lossy. Without it a filter
	// or veto breaks the connection of a type not declared lossy and drops
	// a lossy one alone (filterBreaks, vetoBreaks): TCP cannot lose a
	// message on a connection that stays up, so a stopped message of a
	// type not declared lossy breaks the connection and both ends'
	// services are told — their failure handling runs (resend, retry,
	// look elsewhere) instead of waiting for ever for a message that
	// vanished, which stalls a correct mutual-exclusion protocol whose
	// last reply a stale view vetoed.
	BreakConnection bool
	// UnseenHold is how long a filter on a peer's message or transport
	// error stays in force while the completed rounds cannot judge it: a
	// round replaces the filters on events it could see, and a filter
	// whose peer is outside the round's snapshot (a restarted node's first
	// rounds see only itself, a peer not yet in the neighbourhood) is kept
	// until a round whose snapshot holds that peer re-checks it, or for
	// UnseenHold after a round first kept it, so a peer that never enters
	// the view is not cut off for good. Zero means DefaultUnseenHold;
	// negative: every filter is replaced by the next completed round.
	UnseenHold time.Duration
	// Refinements is how many times a filter set whose check still finds
	// a violation is extended with the filters that violation suggests
	// before the filters are judged unhelpful (default
	// DefaultRefinements; negative: none).
	Refinements int
	// MaxPaths is how many error paths are kept to replay in later rounds
	// (default DefaultMaxPaths; the oldest go first).
	MaxPaths int
}

// Defaults of InterventionPolicy.
const (
	// DefaultPostponeDelay is how long a filtered or vetoed timer,
	// application call or transport error is put off.
	DefaultPostponeDelay = 500 * time.Millisecond
	// DefaultRefinements is the refinements of a filter set.
	DefaultRefinements = 2
	// DefaultMaxPaths is the error paths kept to replay.
	DefaultMaxPaths = 16
)

func (p InterventionPolicy) withDefaults() (InterventionPolicy, error) {
	if anyNegative(int64(p.PostponeDelay), int64(p.MaxPaths)) {
		return p, fmt.Errorf("%w: negative PostponeDelay %v or MaxPaths %d", ErrInvalidConfig, p.PostponeDelay, p.MaxPaths)
	}
	p.PostponeDelay = cmp.Or(p.PostponeDelay, DefaultPostponeDelay)
	p.UnseenHold = cmp.Or(p.UnseenHold, DefaultUnseenHold)
	// Zero takes the default, a negative count means no refinement.
	p.Refinements = max(cmp.Or(p.Refinements, DefaultRefinements), 0)
	p.MaxPaths = cmp.Or(p.MaxPaths, DefaultMaxPaths)
	return p, nil
}

// EscalationPolicy bounds how often steering may keep one kind of event
// (message type and sender, timer, application call type, transport error
// about a peer) from the handler, and how long it holds the kind past
// that (the escalation rule, gate.go). Steering must not trade safety for
// liveness: a filter reinstalled round after round, or a veto repeated on
// every retry, would keep a node from ever healing.
type EscalationPolicy struct {
	// MaxInterventions bounds how often the same kind of event may be kept
	// from the handler within InterventionWindow; past it the kind is
	// escalated: held until a round on a fresher snapshot, or the
	// immediate check on the newest view, finds it safe, or the round's
	// liveness guard releases it (FilterHold and VetoHold can bound that
	// in time), after which it runs for a window (counted as overrides).
	// Default DefaultMaxInterventions; negative: no bound.
	MaxInterventions int
	// InterventionWindow is the window of MaxInterventions, measured on
	// the events' times (default DefaultInterventionWindow).
	InterventionWindow time.Duration
	// FilterHold and VetoHold bound how long an event kind whose
	// intervention budget ran out is held while a filter (FilterHold) or
	// the immediate check (VetoHold) still stops it. Zero (the default):
	// held until a re-check on a newer view finds it safe, or the round's
	// liveness guard releases it — with no bound in time where the node's
	// rounds walk against liveness properties, else for at most
	// UnguardedFilterHold or UnguardedVetoHold. Positive: at most that
	// long, then the kind runs for a window. Negative is an error.
	FilterHold, VetoHold time.Duration
}

// Defaults of EscalationPolicy.
const (
	// DefaultMaxInterventions is the interventions on one kind of event
	// within the window before the kind is escalated.
	DefaultMaxInterventions = 5
	// DefaultInterventionWindow is the window of MaxInterventions.
	DefaultInterventionWindow = time.Minute
)

func (p EscalationPolicy) withDefaults() (EscalationPolicy, error) {
	if p.InterventionWindow < 0 {
		return p, fmt.Errorf("%w: negative intervention window", ErrInvalidConfig)
	}
	if anyNegative(int64(p.FilterHold), int64(p.VetoHold)) {
		return p, fmt.Errorf("%w: negative FilterHold or VetoHold (zero: held until safe)", ErrInvalidConfig)
	}
	p.MaxInterventions = cmp.Or(p.MaxInterventions, DefaultMaxInterventions)
	p.InterventionWindow = cmp.Or(p.InterventionWindow, DefaultInterventionWindow)
	return p, nil
}

// ImmediateCheckConfig tunes the immediate safety check, the check of
// every event against the node's newest view before its handler runs.
type ImmediateCheckConfig struct {
	// ImmediateHop makes the immediate check follow an event's messages
	// one hop (ImmediateCheckHop): a message the event sends to a node the
	// check's view holds is delivered to a copy of that node's state, and
	// the safety properties are judged with the receiver's new state too.
	// It vetoes the decisions whose violation shows at their receiver (a
	// second grant, a commit against an abort), which the paper's check
	// lets through. The receivers' states are the view's — a stale
	// receiver's included, as the hop has nothing newer to step — so a
	// stale view can still veto a safe event until a newer one clears it.
	// (Every check, with or without the hop, leaves out the other nodes
	// it knows to be stale: Heard.)
	ImmediateHop bool
	// LookAhead bounds the look-ahead the immediate check runs before a
	// risky event — a transport error, a message from a peer not heard
	// from since its connection began (LookAheadConfig; the zero value is
	// DefaultLookAhead, States negative turns it off).
	LookAhead LookAheadConfig
}

func (c ImmediateCheckConfig) withDefaults() (ImmediateCheckConfig, error) {
	var err error
	c.LookAhead, err = c.LookAhead.withDefaults()
	return c, err
}
