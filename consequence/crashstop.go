package consequence

import (
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Crash-stops (Faults.Crashes). A crash is what the emulator's Down does
// to a node whose machine is gone (emulation.Emulator.Crash): silent — no
// RST reaches anyone —, and lasting. While the node is down:
//
//   - it takes no action but its restart, and it is not in the state's
//     node.View (Nodes, Service), as a down node is not in the emulator's;
//   - what was in flight to it when it crashed is lost: messages and
//     datagrams (a connection still being opened too: its first message
//     reaches a machine that is gone), and every peer that had messages in
//     flight to it gets a transport error after what the node had sent it,
//     as the emulator's dropped arrival dooms its sender;
//   - each peer's connection to it goes stale, and every write to it is
//     lost and answered by one transport error (the emulator's RST, or
//     its refused connection), as are its datagrams, lost silently;
//   - what it had sent before it crashed is still delivered.
//
// Its restart, when Faults.Downtime is set, is a timer of the down node
// due Downtime after the crash (restartTimer), which the virtual clock
// orders among the other timers; it is a reset (node.EventReset: a fresh
// service that recovers the node's durable part, node.Durable, then Init,
// then the restart calls). The down node keeps its durable projection —
// a fresh value that recovered from the crashed service — as its service,
// so down states that differ only in what the crash lost are one state.

// restartTimer names a down node's restart among its timers. No service
// timer has a name that starts with a NUL byte.
const restartTimer = "\x00restart"

// canCrash reports whether g's successors may crash a node.
func (m *ActorModel) canCrash(g *GlobalState) bool {
	return g.ext.count(0) < int32(min(m.opts.Faults.Crashes, 1<<20))
}

// appendRestart appends the restart of down node i (n) if its time has
// come on the virtual clock (first is the state's earliest timer).
func (m *ActorModel) appendRestart(out []Action[ActorAction], i int, n *actorNode, first time.Time) []Action[ActorAction] {
	at, ok := n.st.TimerAt(restartTimer)
	if !ok {
		return out
	}
	if m.timerEnabled(n, m.ids[i], node.Timer{Name: restartTimer, At: at}, first) {
		out = append(out, Action[ActorAction]{Node: i, Local: true, Fault: true, Act: ActorAction{Kind: ActRestart, Node: m.ids[i]}})
	}
	return out
}

// appendNodeFaults appends up node i's crash and clock jumps, when their
// budgets allow.
func (m *ActorModel) appendNodeFaults(out []Action[ActorAction], g *GlobalState, i int) []Action[ActorAction] {
	id := m.ids[i]
	if m.canCrash(g) {
		out = append(out, Action[ActorAction]{Node: i, Local: true, Fault: true, Act: ActorAction{Kind: ActCrash, Node: id}})
	}
	if m.canJump(g) {
		out = append(out,
			Action[ActorAction]{Node: i, Local: true, Fault: true, Act: ActorAction{Kind: ActClockJump, Node: id}},
			Action[ActorAction]{Node: i, Local: true, Fault: true, Act: ActorAction{Kind: ActClockJump, Node: id, Back: true}})
	}
	return out
}

// nextCrash crash-stops node i at the virtual clock's time (the latest
// node clock, as a reset happens then).
func (m *ActorModel) nextCrash(g *GlobalState, i int, a ActorAction) (*GlobalState, bool) {
	n := g.nodes[i]
	if n.down || !m.canCrash(g) {
		return nil, false
	}
	id := a.Node
	s := newSucc(g)
	for _, d := range g.dgrams {
		if d.to == id {
			s.setDgrams(d.from, d.to, nil)
		}
	}
	s.setChan(id, id, nil)
	s.clearStaleOf(id)
	if m.opts.Faults.Refusals > 0 {
		s.clearWindow(id) // nothing it sent can be refused: it hears of nothing
	}
	for _, c := range g.chans {
		if c.to != id || c.from == id {
			continue
		}
		// Everything in flight to the node is lost; a message arriving at a
		// machine that is gone is answered by a transport error.
		answered := slices.ContainsFunc(c.items, func(it inflight) bool { return it.msg != nil })
		s.setChan(c.from, id, nil)
		if answered {
			s.markStale(c.from, id)
			if !s.g.teQueued(id, c.from) {
				s.appendChan(id, c.from, lateTE)
			}
		}
	}
	for _, c := range g.chans {
		if c.from == id && c.to != id {
			if k, _, ok := g.syn(id, c.to); ok {
				s.markSyn(id, c.to, k, synGhost)
			}
		}
	}
	for _, p := range peersOf(g.conns, id) {
		s.disconnect(id, p)
		s.markStale(p, id)
	}
	at := g.now()
	st := node.State{Service: durableProjection(m.spec, n.st.Service), Rand: n.st.Rand}
	if d := m.opts.Faults.Downtime; d > 0 {
		st.Timers = []node.Timer{{Name: restartTimer, At: at.Add(d)}}
	}
	down := &actorNode{st: st, now: at, down: true}
	if err := m.hashNode(down); err != nil {
		panic("consequence: hashing a down node state: " + err.Error())
	}
	if s.g.in != nil {
		down = s.g.in.node(i, down)
	}
	x := s.lasting()
	x.crashes++
	s.setDown(i, down, x, 1)
	return s.g, true
}

// nextRestart restarts down node i once its restart is due: a reset of
// the down node, run as a step (run) at the restart's time.
func (m *ActorModel) nextRestart(g *GlobalState, i int) (*GlobalState, bool) {
	n := g.nodes[i]
	if !n.down {
		return nil, false
	}
	at, ok := n.st.TimerAt(restartTimer)
	if !ok {
		return nil, false
	}
	t := node.Timer{Name: restartTimer, At: at}
	if first, _ := m.earliest(g); !m.timerEnabled(n, m.ids[i], t, first) {
		return nil, false
	}
	s := newSucc(g)
	x := s.lasting()
	x.down--
	s.setLasting(x)
	if x.down > 0 {
		// run replaces the down node: the successor's view holds it.
		x.live = x.live[:0]
		for k, o := range g.nodes {
			if !o.down || k == i {
				x.live = append(x.live, m.ids[k])
			}
		}
	}
	pending := m.restartCalls(n, m.ids[i])
	return m.run(g, s, i, pending, node.Event{Kind: node.EventReset, At: due(n, t)})
}

// durableProjection returns what a node keeps across a crash of its
// service svc: a fresh value that recovered from it (node.Durable), or a
// fresh value if the service keeps nothing.
func durableProjection(spec node.Spec, svc node.Service) node.Service {
	fresh := spec.New()
	if d, ok := fresh.(node.Durable); ok && svc != nil {
		d.Recover(svc)
	}
	return fresh
}
