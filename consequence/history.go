package consequence

import (
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The client history along a path (node.Invoke, node.Respond), kept in
// the states of a model whose spec declares a history property: a list
// of events shared with the parent state, and a running hash of the
// events' kinds, nodes, operations and results (not their times: the
// order is what a history property judges, and the times are the nodes'
// clocks, which the clock component holds already).

// recordHistory appends the marks node id's step made at its clock at to
// the history of the successor s. A mark with a message outside the spec
// is a broken model (ErrInvalidModel), as a send is.
func (m *ActorModel) recordHistory(s *succ, id node.ID, at time.Time, marks []node.HistoryMark) {
	if len(marks) == 0 || m.obs == nil || !m.obs.history {
		return
	}
	seen := *s.g.seen
	for _, mk := range marks {
		opH, err := m.msgHash(mk.Op)
		if err != nil {
			panic(fmt.Errorf("%w: %v %v of %s: %w", ErrInvalidModel, id, mk.Kind, mk.Op.MessageType(), err))
		}
		var resH node.Hash
		if mk.Result != nil {
			if resH, err = m.msgHash(mk.Result); err != nil {
				panic(fmt.Errorf("%w: %v result %s: %w", ErrInvalidModel, id, mk.Result.MessageType(), err))
			}
		}
		ev := node.HistoryEvent{Kind: mk.Kind, Node: id, Op: mk.Op, Result: mk.Result, At: at}
		seen.hist = &histEvent{prev: seen.hist, ev: ev}
		seen.histN++
		seen.histH = historyStep(seen.histH, ev, opH, resH)
	}
	s.g.seen = &seen
}

// seedHistory starts the start state's history with the invocations of
// the operations its nodes have outstanding (node.Client), in node
// order: they were invoked before the model's start.
func (m *ActorModel) seedHistory(g *GlobalState) error {
	if !m.obs.history {
		return nil
	}
	for i, n := range g.nodes {
		c, ok := n.st.Service.(node.Client)
		if !ok {
			continue
		}
		id := m.ids[i]
		ops := c.Outstanding(id)
		marks := make([]node.HistoryMark, 0, len(ops))
		for _, op := range ops {
			if op == nil {
				continue
			}
			if _, err := m.msgHash(op); err != nil {
				return fmt.Errorf("%w: %v outstanding operation: %w", ErrActorModel, id, err)
			}
			marks = append(marks, node.HistoryMark{Kind: node.Invoked, Op: op})
		}
		s := &succ{g: g}
		m.recordHistory(s, id, n.now, marks)
		for e, k := s.g.seen.hist, 0; k < len(marks); e, k = e.prev, k+1 {
			e.ev.Outstanding = true // the events are the start state's own
		}
	}
	return nil
}

// historyStep extends a history's running hash by one event.
func historyStep(h node.Hash, ev node.HistoryEvent, op, res node.Hash) node.Hash {
	var buf [7 * 8]byte
	b := binary.LittleEndian.AppendUint64(buf[:0], h.Hi)
	b = binary.LittleEndian.AppendUint64(b, h.Lo)
	b = binary.LittleEndian.AppendUint64(b, uint64(ev.Kind)|uint64(ev.Node)<<8)
	b = binary.LittleEndian.AppendUint64(b, op.Hi)
	b = binary.LittleEndian.AppendUint64(b, op.Lo)
	b = binary.LittleEndian.AppendUint64(b, res.Hi)
	b = binary.LittleEndian.AppendUint64(b, res.Lo)
	r := xxh3.Hash128(b)
	return node.Hash{Hi: r.Hi, Lo: r.Lo}
}

// History returns the client history of the path to g (node.Invoke,
// node.Respond), in order; Start is the model's start state when the
// model began at a snapshot rather than an initial configuration. Empty
// for a model whose spec declares no history property. The events'
// messages are shared: read them only.
func (g *GlobalState) History() node.History {
	if g.seen == nil || !g.m.obs.history {
		return node.History{}
	}
	h := node.History{Events: make([]node.HistoryEvent, g.seen.histN)}
	k := g.seen.histN
	for e := g.seen.hist; e != nil; e = e.prev {
		k--
		h.Events[k] = e.ev
	}
	if !g.m.obs.start {
		h.Start = g.m.start
	}
	return h
}

// historyCacheMax bounds the verdicts a history property's adapter keeps:
// the states of a search share few histories (an event is a call or a
// response; most steps make none), so most checks are a lookup.
const historyCacheMax = 1 << 14

// historyCache memoizes a history property's verdicts by the history's
// running hash and length. Safe for concurrent use; the verdict is a pure
// function of the history, so what it keeps never changes a result.
type historyCache struct {
	mu sync.Mutex
	m  map[historyKey]error
}

type historyKey struct {
	h node.Hash
	n int
}

func (c *historyCache) check(g *GlobalState, p node.Property) error {
	if g.seen == nil || g.seen.histN == 0 {
		return nil
	}
	k := historyKey{g.seen.histH, g.seen.histN}
	c.mu.Lock()
	err, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return err
	}
	err = p.History(g.History())
	c.mu.Lock()
	if c.m == nil || len(c.m) >= historyCacheMax {
		c.m = make(map[historyKey]error)
	}
	c.m[k] = err
	c.mu.Unlock()
	return err
}

// adaptObserved adapts a bounded or history property to global states: a
// safety property of the timed system (a bounded one fails where its
// obligation passed its bound) or of the path's history.
func adaptObserved(p node.Property) Property[*GlobalState] {
	if p.Kind == node.Bounded {
		return Property[*GlobalState]{Name: p.Name, Kind: node.Safety, Check: func(g *GlobalState) error {
			return g.boundedErr(p.Name)
		}}
	}
	cache := &historyCache{}
	return Property[*GlobalState]{Name: p.Name, Kind: node.Safety, Check: func(g *GlobalState) error {
		if g.crash != nil {
			return nil
		}
		return cache.check(g, p)
	}}
}

// Spec returns the service the model explores.
func (m *ActorModel) Spec() node.Spec { return m.spec }
