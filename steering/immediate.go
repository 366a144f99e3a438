package steering

import (
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Veto is the immediate safety check's verdict against an event: running
// it would violate Property.
type Veto struct {
	Property string
	Err      error
	// Via lists the receivers, ascending, whose handling of the event's
	// messages makes Property fail (ImmediateCheckHop); empty when the
	// event's own node violates it.
	Via []node.ID
	// Ahead is the number of events, the vetoed one first, after which
	// the look-ahead (LookAheadConfig) found Property failing; zero for
	// the immediate check's own judgement of the event.
	Ahead int
}

// ImmediateCheck is the paper's immediate safety check: it runs ev on a
// copy of core (the real core is not touched), and evaluates the safety
// properties props on view with this node's state replaced by the copy's.
// It vetoes the event if a property that held before the event fails after
// it. A property that already fails on view (a stale or partial view can
// make it fail whatever this node does) is judged on this node alone
// instead: it vetoes the event if it held there before and fails there
// after — the event makes this node violate it on its own, whatever the
// others' stale states say (a RandTree child whose view still shows
// another node as a root with siblings must not become such a root
// itself because RootHasNoSiblings "already failed"). A property that
// fails on the node alone before the event
// vetoes nothing, or the node would freeze. view may be nil (only this
// node is visible) and need not contain the node. A handler panic in the
// copy is returned as an error, not a veto.
//
// It allocates the copy of the node state (node.Cloner makes that cheap);
// its cost per event is in docs/PERFORMANCE.md.
func ImmediateCheck(core *node.Core, ev node.Event, view node.View, props []node.Property) (*Veto, error) {
	return immediateCheck(core, ev, view, props, nil, nil)
}

// immediateCheck is ImmediateCheck, and with hop set ImmediateCheckHop.
// stale, when set, reports the nodes whose state in view the node knows to
// be outdated: they are left out of the judgement (Controller.Heard).
func immediateCheck(core *node.Core, ev node.Event, view node.View, props []node.Property, hop *hopRule, stale func(node.ID) bool) (*Veto, error) {
	if len(props) == 0 || !core.Started() {
		return nil, nil
	}
	full := view
	view = withoutStale(view, core.ID(), stale)
	held, heldAlone := heldBeforeEvent(props, view, core.ID(), core.State())
	if len(held)+len(heldAlone) == 0 {
		return nil, nil
	}
	cp, sends, err := stepEventCopy(core, ev)
	if err != nil {
		return nil, err
	}
	if veto := vetoAfterEvent(props, held, heldAlone, view, core.ID(), cp.State()); veto != nil || hop == nil {
		return veto, nil
	}
	return hop.check(core.State(), cp, sends, full, props, held, ev.At), nil
}

// withoutStale is view with the nodes other than self that stale reports
// left out (view itself when there are none).
func withoutStale(view node.View, self node.ID, stale func(node.ID) bool) node.View {
	if hide := staleNodes(view, self, stale); len(hide) > 0 {
		return hopView{base: view, hide: hide}
	}
	return view
}

// heldBeforeEvent returns the indices of the safety properties of props
// that hold on view with node self at st (held) and, of the others, those
// that hold on the node alone (heldAlone; none without a view, where the
// node alone is what held judged).
func heldBeforeEvent(props []node.Property, view node.View, self node.ID, st *node.State) (held, heldAlone []int) {
	before := overlay{base: view, self: self, st: st}
	alone := overlay{self: self, st: st}
	for i, p := range props {
		switch {
		case p.Kind != node.Safety:
		case p.Check(before) == nil:
			held = append(held, i)
		case view != nil && p.Check(alone) == nil:
			heldAlone = append(heldAlone, i)
		}
	}
	return held, heldAlone
}

// stepEventCopy steps ev on a copy of core and returns the copy and the
// messages the event sent; a handler panic is an error.
func stepEventCopy(core *node.Core, ev node.Event) (*node.Core, []node.Envelope, error) {
	cp, err := core.Copy()
	if err != nil {
		return nil, nil, fmt.Errorf("steering: immediate check: copying %v: %w", core.ID(), err)
	}
	sends, err := stepCopy(cp, ev)
	if err != nil {
		return nil, nil, fmt.Errorf("steering: immediate check of %v at %v: %w", ev, core.ID(), err)
	}
	return cp, sends, nil
}

// vetoAfterEvent judges the properties that held before the event with
// node self at its new state st: those of held on view, those of
// heldAlone on the node alone. The first that fails is the veto.
func vetoAfterEvent(props []node.Property, held, heldAlone []int, view node.View, self node.ID, st *node.State) *Veto {
	if veto := firstFailing(props, held, overlay{base: view, self: self, st: st}); veto != nil {
		return veto
	}
	return firstFailing(props, heldAlone, overlay{self: self, st: st})
}

// firstFailing returns the veto of the first property of props, among the
// indices idx, that fails on view (nil if all hold).
func firstFailing(props []node.Property, idx []int, view node.View) *Veto {
	for _, i := range idx {
		if err := props[i].Check(view); err != nil {
			return &Veto{Property: props[i].Name, Err: err}
		}
	}
	return nil
}

// staleNodes returns the nodes of view other than self that stale reports
// (nil: none, no view or no rule).
func staleNodes(view node.View, self node.ID, stale func(node.ID) bool) map[node.ID]bool {
	if view == nil || stale == nil {
		return nil
	}
	return nodesWhere(view.Nodes(), func(id node.ID) bool { return id != self && stale(id) })
}

// nodesWhere returns the set of ids that pick reports (nil if none).
func nodesWhere(ids []node.ID, pick func(node.ID) bool) map[node.ID]bool {
	var set map[node.ID]bool
	for _, id := range ids {
		if !pick(id) {
			continue
		}
		if set == nil {
			set = map[node.ID]bool{}
		}
		set[id] = true
	}
	return set
}

// stepCopy steps a copy, turning a handler panic into an error, and
// returns the messages the event sent. They alias c's effects and stay
// valid until c steps again (the hop steps only the receivers' copies).
func stepCopy(c *node.Core, ev node.Event) (sends []node.Envelope, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panicked: %v", p)
		}
	}()
	fx, err := c.Step(ev)
	return fx.Sends, err
}

// overlay is view with node self's state replaced by st.
type overlay struct {
	base node.View
	self node.ID
	st   *node.State
}

var _ node.View = overlay{}

func (o overlay) Nodes() []node.ID {
	if o.base == nil {
		return []node.ID{o.self}
	}
	ids := o.base.Nodes()
	if i, ok := slices.BinarySearch(ids, o.self); !ok {
		ids = slices.Insert(slices.Clone(ids), i, o.self)
	}
	return ids
}

func (o overlay) Service(id node.ID) node.Service {
	if id == o.self {
		return o.st.Service
	}
	if o.base == nil {
		return nil
	}
	return o.base.Service(id)
}

func (o overlay) TimerScheduled(id node.ID, name string) bool {
	if id == o.self {
		_, ok := o.st.TimerAt(name)
		return ok
	}
	return o.base != nil && o.base.TimerScheduled(id, name)
}

// knownView is the immediate check's view (Controller.CheckView): the
// newest snapshot's nodes, and those of earlier snapshots it does not
// hold, each at the newest checkpoint seen of it.
type knownView struct {
	ids   []node.ID // ascending
	nodes map[node.ID]knownState
}

// knownState is a node's newest decoded state, when the snapshot that
// held it completed and its checkpoint number (zero: unknown, a state
// restored from a durable record).
type knownState struct {
	st *node.State
	at time.Time
	cn uint64
}

// nodeCN is a node's checkpoint number in a snapshot.
type nodeCN struct {
	id node.ID
	cn uint64
}

var _ node.View = (*knownView)(nil)

func (k *knownView) Nodes() []node.ID { return k.ids }

func (k *knownView) Service(id node.ID) node.Service {
	if n, ok := k.nodes[id]; ok {
		return n.st.Service
	}
	return nil
}

// State returns id's newest decoded state (nil if unknown). It is shared
// with the snapshots' views: Clone it before stepping it.
func (k *knownView) State(id node.ID) *node.State {
	if n, ok := k.nodes[id]; ok {
		return n.st
	}
	return nil
}

func (k *knownView) TimerScheduled(id node.ID, name string) bool {
	n, ok := k.nodes[id]
	if !ok {
		return false
	}
	_, ok = n.st.TimerAt(name)
	return ok
}

// RememberView merges the view of the snapshot the controller decoded last
// (Explore), completed at at, into the immediate check's view: its nodes
// at their new states, and the nodes only earlier snapshots held while
// their snapshot completed at most memory before the last snapshot that
// held a node besides this one (zero: that snapshot's nodes alone). A
// snapshot of this node alone — a restarted node's first gather, before
// it has heard from anyone — is no news about the others, so it neither
// replaces nor ages them: what the node knew before its reset still
// judges its first events (the zoo's logship follower appended the entry
// after the gap, its view holding itself alone). Decoded states are immutable, so the
// merge copies no state. The layer calls it for every snapshot its gate
// decodes.
func (c *Controller) RememberView(at time.Time, memory time.Duration) {
	if c.view == nil {
		return
	}
	ids := c.view.Nodes()
	blind := len(ids) == 0 || (len(ids) == 1 && ids[0] == c.self)
	ref := c.sightedRef(at, blind)
	k := c.decodedKnown(ids, at)
	if old := c.known; old != nil && (memory > 0 || blind) {
		old.keepRecentInto(k, ref, memory)
	}
	c.setKnown(k)
}

// sightedRef returns the time the remembered nodes' ages are measured
// from for a snapshot completed at at: at itself, and then the last
// sighting of another node, unless the snapshot is blind (it holds no node
// but this one) and another node was sighted before, whose time it keeps.
func (c *Controller) sightedRef(at time.Time, blind bool) time.Time {
	if !blind {
		c.sighted = at
		return at
	}
	if !c.sighted.IsZero() {
		return c.sighted
	}
	return at
}

// decodedKnown is the check's view of the last decoded snapshot (nodes
// ids, completed at at), with their checkpoint numbers.
func (c *Controller) decodedKnown(ids []node.ID, at time.Time) *knownView {
	k := &knownView{nodes: make(map[node.ID]knownState, len(ids))}
	for _, id := range ids {
		k.nodes[id] = knownState{st: c.view.State(id), at: at}
	}
	for _, n := range c.viewCNs {
		if ks, ok := k.nodes[n.id]; ok {
			ks.cn = n.cn
			k.nodes[n.id] = ks
		}
	}
	return k
}

// keepRecentInto adds to k the nodes of this older view that k lacks and
// whose snapshot completed at most memory before ref.
func (old *knownView) keepRecentInto(k *knownView, ref time.Time, memory time.Duration) {
	for id, n := range old.nodes {
		if _, ok := k.nodes[id]; !ok && ref.Sub(n.at) <= memory {
			k.nodes[id] = n
		}
	}
}

// setKnown makes k the immediate check's view (its IDs sorted here).
func (c *Controller) setKnown(k *knownView) {
	k.ids = make([]node.ID, 0, len(k.nodes))
	for id := range k.nodes {
		k.ids = append(k.ids, id)
	}
	slices.Sort(k.ids)
	c.known = k
	c.viewVersion++
}

// CheckView returns the view the immediate check evaluates properties on:
// the merged view of RememberView once it ran, else the last snapshot's
// (View); nil before the first snapshot.
func (c *Controller) CheckView() node.View {
	if c.known != nil {
		return c.known
	}
	return c.View()
}
