package steering

import (
	"slices"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// vetoModel is how the liveness guard's walks hold a kind the gate holds
// for the immediate check (heldKinds.vetoes): an event of the kind runs
// unless running it makes a safety property fail that held before — the
// check's rule (ImmediateCheck), applied to the model's global state
// rather than the node's view — and is then held as the gate holds it: a
// message dropped (its connection broken unless its type is lossy), a
// timer, call or transport error postponed (disabled in the model while
// held).
type vetoModel struct {
	kinds filterSet
	// held is the walks' model with the kinds in place as filters: what a
	// held event does.
	held   *consequence.ActorModel
	safety []consequence.Property[*consequence.GlobalState]
}

// vetoModel returns the veto model of the search's veto holds for walks
// with the filters fs in place.
func (ls *livenessSearch) vetoModel(fs filterSet) *vetoModel {
	vm := &vetoModel{kinds: ls.vetoes}
	vm.held = ls.m.WithIntercept(append(slices.Clone(fs), ls.vetoes...).intercept)
	for _, p := range ls.c.cfg.Properties {
		vm.safety = append(vm.safety, consequence.AdaptProperty(p))
	}
	return vm
}

// next is the successor of g by a under the veto holds: ok false when a
// is not of a held kind (the caller runs it as usual).
func (vm *vetoModel) next(m *consequence.ActorModel, g *consequence.GlobalState, a consequence.ActorAction) (*consequence.GlobalState, bool, bool) {
	if vm.kinds.intercept(a).Handle {
		return nil, false, false
	}
	next, enabled := m.Next(g, a)
	if !enabled || !vm.unsafe(g, next) {
		return next, enabled, true
	}
	next, enabled = vm.held.Next(g, a)
	return next, enabled, true
}

// unsafe reports whether a safety property that holds in g fails in next.
func (vm *vetoModel) unsafe(g, next *consequence.GlobalState) bool {
	for _, p := range vm.safety {
		if p.Check(next) != nil && p.Check(g) == nil {
			return true
		}
	}
	return false
}
