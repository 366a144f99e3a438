package steering

import (
	"context"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// walkBudget is a round's budget of liveness steps (Config.MaxWalkSteps):
// every step a walk takes computes a state, which the emulator charges
// virtual time for. Once it is spent it cancels its context, which stops
// the walk in progress within 256 steps (consequence checks the context
// that often). It is used by one goroutine.
type walkBudget struct {
	ctx    context.Context
	cancel context.CancelFunc
	steps  uint64
	limit  uint64
}

// newWalkBudget returns a budget of limit steps and, if wall is
// positive, that much wall time (Config.MaxTime: the live shell's bound).
func newWalkBudget(ctx context.Context, limit int, wall time.Duration) *walkBudget {
	bctx, cancel := context.WithCancel(ctx)
	if wall > 0 {
		var stop context.CancelFunc
		bctx, stop = context.WithTimeout(bctx, wall)
		inner := cancel
		cancel = func() { stop(); inner() }
	}
	return &walkBudget{ctx: bctx, cancel: cancel, limit: uint64(limit)}
}

// model returns m as the walks see it: steps counted against b.
func (b *walkBudget) model(m *consequence.ActorModel) *budgetModel {
	return &budgetModel{m: m, b: b}
}

// budgetModel is an actor model whose steps count against a walkBudget,
// with the liveness guard's veto holds when veto is set.
type budgetModel struct {
	m    *consequence.ActorModel
	b    *walkBudget
	veto *vetoModel
}

var _ consequence.Model[*consequence.GlobalState, consequence.ActorAction] = (*budgetModel)(nil)

func (bm *budgetModel) Init() []*consequence.GlobalState { return bm.m.Init() }

func (bm *budgetModel) Actions(g *consequence.GlobalState, out []consequence.Action[consequence.ActorAction]) []consequence.Action[consequence.ActorAction] {
	return bm.m.Actions(g, out)
}

func (bm *budgetModel) Next(g *consequence.GlobalState, a consequence.ActorAction) (*consequence.GlobalState, bool) {
	b := bm.b
	b.steps++
	if b.steps > b.limit {
		b.cancel() // idempotent
	}
	if bm.veto != nil {
		if next, enabled, held := bm.veto.next(bm.m, g, a); held {
			return next, enabled
		}
	}
	return bm.m.Next(g, a)
}

func (bm *budgetModel) Fingerprint(g *consequence.GlobalState) node.Hash { return bm.m.Fingerprint(g) }

func (bm *budgetModel) LocalFingerprint(g *consequence.GlobalState, n int) node.Hash {
	return bm.m.LocalFingerprint(g, n)
}
