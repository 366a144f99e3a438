package steering

import (
	"maps"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// ImmediateCheckHop is ImmediateCheck that also follows the event one hop:
// when the event itself breaks nothing, the messages it sends to nodes
// whose states view holds are delivered to copies of those states (in the
// order sent, all of them, nothing else happening in between), and a
// safety property that held on view before the event and fails with this
// node's and the receivers' new states vetoes the event (Veto.Via names
// the receivers). It catches the class of violation that shows one hop
// away from the decision that makes it: a grantor whose grant makes a
// second holder, a coordinator whose decision makes a participant commit
// against another's abort, a report that makes its reader count twice —
// where the paper's check, which judges the node's own new state, sees
// nothing wrong until the receiver's handler runs, and the receiver cannot
// know. The receivers' states are what view holds of them (the node's
// last snapshots), so a stale view can veto an event that would be safe
// now: the veto is held until a re-check on a newer view finds the event
// safe, as any veto (Config.ImmediateHop has the measured trade-off). The
// controller's check also leaves out the bystanders it knows to be stale
// (Controller.Heard); this function has no such knowledge.
//
// view must hold node states (a *snapshot.View, the controller's
// CheckView, a consequence.GlobalState) for the hop to run; for any other
// view, and for sends to nodes outside it, it is ImmediateCheck. A
// receiver handler that panics on its copy drops that message from the
// hop. It allocates a copy of each receiver's state.
func ImmediateCheckHop(core *node.Core, ev node.Event, view node.View, props []node.Property) (*Veto, error) {
	return immediateCheck(core, ev, view, props, &hopRule{}, nil)
}

// hopRule is how the check one hop ahead reads its view: stale, when set,
// reports the nodes whose state in the view is known to be outdated.
type hopRule struct {
	stale func(node.ID) bool
}

// stateView is a view that holds node states (a *snapshot.View, the
// controller's knownView), which the hop steps copies of.
type stateView interface {
	node.View
	State(id node.ID) *node.State
}

// explorerView is a view with its nodes' states as an explorer holds them
// (consequence.GlobalState).
type explorerView interface {
	node.View
	NodeState(id node.ID) (*node.State, time.Time, bool)
}

// explorerStates reads an explorerView as a stateView.
type explorerStates struct{ explorerView }

func (e explorerStates) State(id node.ID) *node.State {
	st, _, ok := e.NodeState(id)
	if !ok {
		return nil
	}
	return st
}

// statesOf returns view as a stateView, if it holds states.
func statesOf(view node.View) (stateView, bool) {
	switch v := view.(type) {
	case stateView:
		return v, true
	case explorerView:
		return explorerStates{v}, true
	}
	return nil, false
}

// check delivers sends from cp's node to copies of their receivers in
// view and checks the properties held (indices into props, those that held
// on view before the event, when self was the node's state) on view with
// cp's state and the receivers' new states. A bystander — a node of the
// view neither the sender nor a receiver — that h.stale reports is left
// out of both sides of the judgement: its state is evidence the node knows
// to be outdated.
func (h *hopRule) check(self *node.State, cp *node.Core, sends []node.Envelope, view node.View, props []node.Property, held []int, at time.Time) *Veto {
	sv, ok := statesOf(view)
	if !ok || len(held) == 0 || len(sends) == 0 {
		return nil
	}
	receivers := deliverOneHop(cp, sends, sv, at)
	if len(receivers) == 0 {
		return nil
	}
	over := hopStates(cp, receivers)
	after := hopView{base: view, over: over, hide: h.bystandersStale(view, over)}
	if h.stale != nil {
		// held was judged on a view without every stale node; the hop
		// shows the stale receivers, so judge it again on the hop's own
		// view before the event.
		before := hopView{base: view, over: map[node.ID]*node.State{cp.ID(): self}, hide: after.hide}
		held = slices.DeleteFunc(slices.Clone(held), func(i int) bool { return props[i].Check(before) != nil })
	}
	veto := firstFailing(props, held, after)
	if veto != nil {
		veto.Via = slices.Sorted(maps.Keys(receivers))
	}
	return veto
}

// hopStates returns the new states of the hop: the receivers' copies' and
// the sender's, cp.
func hopStates(cp *node.Core, receivers map[node.ID]*node.Core) map[node.ID]*node.State {
	over := make(map[node.ID]*node.State, len(receivers)+1)
	for id, rc := range receivers {
		over[id] = rc.State()
	}
	over[cp.ID()] = cp.State()
	return over
}

// bystandersStale returns the nodes of view outside over that h.stale
// reports (nil: none, or no staleness rule).
func (h *hopRule) bystandersStale(view node.View, over map[node.ID]*node.State) map[node.ID]bool {
	if h.stale == nil {
		return nil
	}
	return nodesWhere(view.Nodes(), func(id node.ID) bool {
		_, mine := over[id]
		return !mine && h.stale(id)
	})
}

// deliverOneHop steps each message of sends on a copy of its receiver's
// state in view (one copy per receiver, the messages in the order sent)
// and returns the copies stepped, nil when none was. Messages to the
// sender itself or to a node view does not hold are left out, as is a
// message whose receiver's handler panicked (with that receiver, whose
// copy's state is then unspecified).
func deliverOneHop(cp *node.Core, sends []node.Envelope, view stateView, at time.Time) map[node.ID]*node.Core {
	var receivers map[node.ID]*node.Core // allocated at the first receiver: most events send nothing
	broken := map[node.ID]bool{}
	for _, s := range sends {
		if s.To == cp.ID() || broken[s.To] {
			continue
		}
		rc := receivers[s.To]
		if rc == nil {
			rc = receiverCopy(cp, view, s.To)
		}
		if rc == nil {
			continue
		}
		if receivers == nil {
			receivers = make(map[node.ID]*node.Core)
		}
		receivers[s.To] = rc
		ev := node.Event{Kind: node.EventMessage, At: at, From: cp.ID(), Msg: s.Msg}
		if _, err := stepCopy(rc, ev); err != nil {
			broken[s.To] = true
			delete(receivers, s.To)
		}
	}
	return receivers
}

// receiverCopy is a copy of cp's node for receiver to at its state in
// view (nil if view holds no state of to, or it does not copy).
func receiverCopy(cp *node.Core, view stateView, to node.ID) *node.Core {
	st := view.State(to)
	if st == nil || st.Service == nil {
		return nil
	}
	rc, err := cp.CopyFor(to, st)
	if err != nil {
		return nil
	}
	return rc
}

// hopView is view with some nodes' states replaced by over's and the
// nodes of hide left out.
type hopView struct {
	base node.View
	over map[node.ID]*node.State
	hide map[node.ID]bool
}

var _ node.View = hopView{}

func (h hopView) Nodes() []node.ID {
	ids := h.base.Nodes()
	if len(h.hide) > 0 {
		ids = slices.DeleteFunc(slices.Clone(ids), func(id node.ID) bool { return h.hide[id] })
	}
	var extra []node.ID
	for id := range h.over {
		if _, ok := slices.BinarySearch(ids, id); !ok {
			extra = append(extra, id)
		}
	}
	if len(extra) == 0 {
		return ids
	}
	out := append(slices.Clone(ids), extra...)
	slices.Sort(out)
	return out
}

func (h hopView) Service(id node.ID) node.Service {
	if st, ok := h.over[id]; ok {
		return st.Service
	}
	if h.hide[id] {
		return nil
	}
	return h.base.Service(id)
}

func (h hopView) TimerScheduled(id node.ID, name string) bool {
	if st, ok := h.over[id]; ok {
		_, ok := st.TimerAt(name)
		return ok
	}
	return !h.hide[id] && h.base.TimerScheduled(id, name)
}

// Heard records that this node received a service message stamped with
// checkpoint number cn from peer (the layer calls it for every message it
// gates): a checkpoint of peer older than that message is outdated.
func (c *Controller) Heard(peer node.ID, cn uint64) {
	if c.heard == nil {
		c.heard = map[node.ID]uint64{}
	}
	c.firstWord = node.None
	if _, ok := c.heard[peer]; !ok {
		c.firstWord = peer
		c.heard[peer] = 0
	}
	if cn > c.heard[peer] {
		c.heard[peer] = cn
	}
}

// staleInView reports whether the check's view holds id at a checkpoint
// taken before a message id has since sent this node: a message stamped
// cn was sent after id's checkpoint number cn, so id's state has moved on
// since (the lock holder that released it, whose checkpoint still holds
// the lock). A checkpoint of unknown number (restored from a durable
// record) is not judged.
func (c *Controller) staleInView(id node.ID) bool {
	heard, ok := c.heard[id]
	if !ok {
		return false
	}
	var cn uint64
	if c.known != nil {
		cn = c.known.nodes[id].cn
	} else if i := slices.IndexFunc(c.viewCNs, func(n nodeCN) bool { return n.id == id }); i >= 0 {
		cn = c.viewCNs[i].cn
	}
	return cn > 0 && heard >= cn
}

// Forget drops what Heard recorded of peer: its connection broke, and a
// peer that restarted numbers its checkpoints again from below.
func (c *Controller) Forget(peer node.ID) { delete(c.heard, peer) }
