package steering

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// LookAheadConfig bounds the look-ahead the immediate check runs before a
// risky event (Config.LookAhead). The zero value is DefaultLookAhead.
//
// A risky event is one that opens an episode the node's rounds had no
// chance to judge: a transport error (a peer's RST, its reset, a broken
// connection), or a message from a peer this node has not heard from
// since its connection to it began (a join from a new node, the first word
// of a restarted one). Before such an event runs, and after the immediate
// check passed it, the check explores the near future from the freshest
// view it has — the check view's states (stale ones left out, as the
// check does), this node's state with the event handled, the messages the
// event sent in flight — and the same future without the event. A safety
// property that fails within the bound with the event and not without it
// vetoes the event, as the check's own veto does (a transport error is
// postponed and looked at again on the next view, a message dropped with
// its connection broken). Violations that need the peers' in-flight
// messages or states the view does not hold are not seen.
type LookAheadConfig struct {
	// States is the most unique states each of a look-ahead's two
	// searches explores (default DefaultLookAheadStates); negative turns
	// the look-ahead off.
	States int
	// Depth is the most events past the risky one a path follows
	// (default DefaultLookAheadDepth).
	Depth int
}

// The look-ahead's defaults (DefaultLookAhead).
const (
	// DefaultLookAheadStates keeps a look-ahead's two searches under a
	// millisecond each on the papers' services: risky events are rare,
	// but one may come with every connection.
	DefaultLookAheadStates = 256
	// DefaultLookAheadDepth follows the risky event's consequences through
	// a request and its answer and the handlers either side.
	DefaultLookAheadDepth = 4
)

// DefaultLookAhead returns the look-ahead's defaults.
func DefaultLookAhead() LookAheadConfig {
	return LookAheadConfig{States: DefaultLookAheadStates, Depth: DefaultLookAheadDepth}
}

// withDefaults fills the zero fields and checks the rest.
func (c LookAheadConfig) withDefaults() (LookAheadConfig, error) {
	d := DefaultLookAhead()
	c.States, c.Depth = cmp.Or(c.States, d.States), cmp.Or(c.Depth, d.Depth)
	if c.Depth < 0 {
		return c, fmt.Errorf("%w: negative LookAhead.Depth", ErrInvalidConfig)
	}
	return c, nil
}

// risky reports whether ev opens an episode the look-ahead judges: a
// transport error, or a message whose sender this node had not heard from
// before it (Heard recorded the message as the first word since the
// connection began).
func (c *Controller) risky(ev node.Event) bool {
	switch ev.Kind {
	case node.EventTransportError:
		return true
	case node.EventMessage:
		return ev.From == c.firstWord && ev.From != node.None
	}
	return false
}

// lookAhead is the look-ahead before the risky event ev at core: a veto
// when a safety property fails within the bound with ev handled now and
// not without it, or nil.
func (c *Controller) lookAhead(core *node.Core, ev node.Event) (*Veto, error) {
	sv, ok := statesOf(c.CheckView())
	if !ok || c.cfg.LookAhead.States < 0 {
		return nil, nil
	}
	c.stats.LookAheads++
	others, err := c.aheadCheckpoints(sv, core.ID(), ev)
	if err != nil {
		return nil, err
	}
	return c.aheadVeto(core, ev, others)
}

// aheadVeto explores the near future from others with ev handled on a
// copy of core (its sends to others in flight) and without it, and
// vetoes ev for the first property only the first future violates.
func (c *Controller) aheadVeto(core *node.Core, ev node.Event, others []consequence.Checkpoint) (*Veto, error) {
	cp, err := core.Copy()
	if err != nil {
		return nil, fmt.Errorf("steering: look-ahead: copying %v: %w", core.ID(), err)
	}
	sends, err := stepCopy(cp, ev)
	if err != nil {
		return nil, nil // the real handler runs and surfaces the panic
	}
	with, err := c.violatedAhead(append(slices.Clone(others), selfCheckpoint(cp, ev)...), sendsAmong(sends, others))
	if err != nil || len(with) == 0 {
		return nil, err
	}
	without, err := c.violatedAhead(append(slices.Clone(others), selfCheckpoint(core, ev)...), nil)
	if err != nil {
		return nil, err
	}
	return vetoOfNewViolation(with, without), nil
}

// sendsAmong returns the sends addressed to a node of cps, in order.
func sendsAmong(sends []node.Envelope, cps []consequence.Checkpoint) []node.Envelope {
	members := make(map[node.ID]bool, len(cps)+1)
	for _, o := range cps {
		members[o.ID] = true
	}
	var inFlight []node.Envelope
	for _, s := range sends {
		if members[s.To] {
			inFlight = append(inFlight, s)
		}
	}
	return inFlight
}

// vetoOfNewViolation is the veto of the first violation of with whose
// property without does not violate (nil: none).
func vetoOfNewViolation(with, without []aheadViolation) *Veto {
	for _, v := range with {
		if !slices.ContainsFunc(without, func(w aheadViolation) bool {
			return w.Property == v.Property
		}) {
			return &Veto{Property: v.Property, Err: v.Err, Ahead: v.Depth + 1}
		}
	}
	return nil
}

// aheadCheckpoints returns the checkpoints of the view's nodes other than
// self and the stale ones, at the event's time.
func (c *Controller) aheadCheckpoints(sv stateView, self node.ID, ev node.Event) ([]consequence.Checkpoint, error) {
	var out []consequence.Checkpoint
	for _, id := range sv.Nodes() {
		if id == self || c.staleInView(id) {
			continue
		}
		cp, ok, err := aheadCheckpointOf(id, sv.State(id), ev.At)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, cp)
		}
	}
	return out, nil
}

// aheadCheckpointOf encodes node id's state st as a checkpoint at at; ok
// is false for a node without a state or service.
func aheadCheckpointOf(id node.ID, st *node.State, at time.Time) (consequence.Checkpoint, bool, error) {
	if st == nil || st.Service == nil {
		return consequence.Checkpoint{}, false, nil
	}
	b, err := st.AppendCheckpoint(nil)
	if err != nil {
		return consequence.Checkpoint{}, false, fmt.Errorf("steering: look-ahead: checkpoint of %v: %w", id, err)
	}
	return consequence.Checkpoint{ID: id, Bytes: b, At: at}, true, nil
}

// selfCheckpoint is core's state as a one-element checkpoint list at the
// event's time (nil when it cannot be encoded: the look-ahead then judges
// without this node, and finds nothing of its own doing).
func selfCheckpoint(core *node.Core, ev node.Event) []consequence.Checkpoint {
	b, err := core.Checkpoint()
	if err != nil {
		return nil
	}
	return []consequence.Checkpoint{{ID: core.ID(), Bytes: b, At: ev.At}}
}

// aheadViolation is a violation the look-ahead found.
type aheadViolation = consequence.Violation[*consequence.GlobalState, consequence.ActorAction]

// violatedAhead explores from the nodes cps with inFlight on their way,
// within the look-ahead's bounds, and returns the safety violations found
// below the start state (the first of each property, shallowest first).
func (c *Controller) violatedAhead(cps []consequence.Checkpoint, inFlight []node.Envelope) ([]aheadViolation, error) {
	m, err := consequence.NewActorModelWithFresh(c.cfg.Spec, cps, nil, inFlight, consequence.ActorOptions{Workload: c.cfg.Workload, TimerSkew: c.cfg.TimerSkew})
	if err != nil {
		return nil, fmt.Errorf("steering: look-ahead at %v: %w", c.self, err)
	}
	props := safetyPropertiesOf(c.cfg.Properties)
	if len(props) == 0 {
		return nil, nil
	}
	res, err := consequence.NewChecker(m).
		Properties(props...).
		Strategy(consequence.BFS).
		MaxStates(c.cfg.LookAhead.States).
		MaxDepth(c.cfg.LookAhead.Depth).
		MaxViolations(1).
		Run(context.Background())
	if res == nil {
		return nil, fmt.Errorf("steering: look-ahead at %v: %w", c.self, err)
	}
	c.stats.LookAheadStates += res.Unique
	out := slices.DeleteFunc(slices.Clone(res.Violations), func(v aheadViolation) bool {
		return v.Depth == 0
	})
	slices.SortStableFunc(out, func(a, b aheadViolation) int { return a.Depth - b.Depth })
	return out, nil
}

// safetyPropertiesOf returns the safety properties of props, adapted to
// global states, in order.
func safetyPropertiesOf(props []node.Property) []consequence.Property[*consequence.GlobalState] {
	var out []consequence.Property[*consequence.GlobalState]
	for _, p := range props {
		if p.Kind == node.Safety {
			out = append(out, consequence.AdaptProperty(p))
		}
	}
	return out
}
