package consequence

import (
	"errors"
	"fmt"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// ErrNoSymmetry is wrapped (with ErrActorModel) by the actor-model
// constructors when ActorOptions.Symmetry is set but the service declares
// no usable group of interchangeable nodes (node.Symmetric) among the
// model's nodes, or a malformed one.
var ErrNoSymmetry = errors.New("consequence: no symmetry groups")

// actorSymmetry is an ActorModel's symmetry reduction (ActorOptions.Symmetry):
// the declared groups of interchangeable nodes, as node indexes. It is
// immutable once built.
type actorSymmetry struct {
	// groups are the groups, each ascending by index (hence by ID).
	groups [][]int
	// group[i] is 1 + the group of node index i, 0 outside every group.
	group []int
}

// newActorSymmetry asks the service for its groups among m's nodes.
func newActorSymmetry(m *ActorModel) (*actorSymmetry, error) {
	sym, ok := m.spec.New().(node.Symmetric)
	if !ok {
		return nil, fmt.Errorf("%w: %w: service %q does not declare interchangeable nodes (node.Symmetric)", ErrActorModel, ErrNoSymmetry, m.spec.Name)
	}
	groups := sym.SymmetryGroups(slices.Clone(m.ids))
	s := &actorSymmetry{group: make([]int, len(m.ids))}
	for _, ids := range groups {
		if len(ids) < 2 {
			return nil, fmt.Errorf("%w: %w: service %q declares group %v of fewer than two nodes", ErrActorModel, ErrNoSymmetry, m.spec.Name, ids)
		}
		var idx []int
		for _, id := range ids {
			i, in := m.index(id)
			if !in || s.group[i] != 0 {
				return nil, fmt.Errorf("%w: %w: service %q declares %v in group %v: not a node of the model, or in two groups", ErrActorModel, ErrNoSymmetry, m.spec.Name, id, ids)
			}
			s.group[i] = len(s.groups) + 1
			idx = append(idx, i)
		}
		slices.Sort(idx)
		s.groups = append(s.groups, idx)
	}
	if len(s.groups) == 0 {
		return nil, fmt.Errorf("%w: %w: service %q declares no group among nodes %v", ErrActorModel, ErrNoSymmetry, m.spec.Name, m.ids)
	}
	return s, nil
}

// SymmetryGroups returns the groups of interchangeable nodes the model
// reduces by (ActorOptions.Symmetry), each ascending; nil without symmetry.
func (m *ActorModel) SymmetryGroups() [][]node.ID {
	if m.sym == nil {
		return nil
	}
	out := make([][]node.ID, len(m.sym.groups))
	for k, g := range m.sym.groups {
		for _, i := range g {
			out[k] = append(out[k], m.ids[i])
		}
	}
	return out
}

// placeholder is the ID every member of group k (from 1) stands in for
// when a node's signature is computed: far above any real node's ID.
func placeholder(k int) node.ID { return node.ID(^uint64(0) - uint64(k)) }

// maxTieOrders bounds the renamings fingerprint tries to break ties
// between members with equal signatures (the product of the factorials of
// the tied runs' lengths: 6 is three members tied, or a pair and another
// pair... ). Past it the tied members keep their ID order. Every order
// tried costs a renamed fingerprint; on Paxos, where the members that tie
// are nearly always interchangeable for real, a bound of 24 doubled the
// time per state and merged nothing more.
const maxTieOrders = 6

// fingerprint is Fingerprint under symmetry: the fingerprint of g with the
// members of each group renamed by the permutation that sorts them by
// signature (see sortedMembers), the least over the orders of the tied
// members when there are at most maxTieOrders of them. Any renaming gives
// the fingerprint of a state of g's orbit, so two states get equal
// fingerprints only if one is the other renamed (up to the random sources
// of group members, which the declaration says do not matter), whatever the
// ties. Signatures are invariant under renaming the groups, so the form is
// canonical — the same for every state of the orbit — when no ties remain
// past the bound; otherwise it is one of several, and the search merges
// fewer states than it could (never more). A crashed state is left as it
// is: it has no successors, and its crash report names a node in free text.
func (s *actorSymmetry) fingerprint(m *ActorModel, g *GlobalState) node.Hash {
	if g.crash != nil {
		return g.fp
	}
	orders, runs, known := s.sortedMembers(m, g)
	to := make(map[node.ID]node.ID)
	rename := func(id node.ID) node.ID {
		if r, ok := to[id]; ok {
			return r
		}
		return id
	}
	eval := func() node.Hash {
		for k, grp := range s.groups {
			for pos, i := range orders[k] {
				to[m.ids[i]] = m.ids[grp[pos]]
			}
		}
		return m.renamedFingerprint(g, rename, s.group, known)
	}
	if n := tieOrders(runs); n == 1 || n > maxTieOrders {
		return eval()
	}
	var best node.Hash
	first := true
	var walk func(r int)
	walk = func(r int) {
		if r == len(runs) {
			if h := eval(); first || cmpHash(h, best) < 0 {
				best, first = h, false
			}
			return
		}
		run := runs[r]
		permuteRange(orders[run.group], run.lo, run.hi, func() { walk(r + 1) })
	}
	walk(0)
	return best
}

// tieRun is a run of members with equal signatures: positions lo..hi-1 of
// group's sorted order.
type tieRun struct{ group, lo, hi int }

// tieOrders returns the number of orders of the tied runs, stopping early
// past maxTieOrders.
func tieOrders(runs []tieRun) int {
	n := 1
	for _, r := range runs {
		for k := 2; k <= r.hi-r.lo; k++ {
			if n *= k; n > maxTieOrders {
				return n
			}
		}
	}
	return n
}

// permuteRange calls visit once for every order of a[lo:hi], permuting it
// in place, and leaves it as it found it.
func permuteRange(a []int, lo, hi int, visit func()) {
	if hi-lo <= 1 {
		visit()
		return
	}
	for i := lo; i < hi; i++ {
		a[lo], a[i] = a[i], a[lo]
		permuteRange(a, lo+1, hi, visit)
		a[lo], a[i] = a[i], a[lo]
	}
}

// sortedMembers returns each group's members (node indexes) sorted by their
// signature, ties by ID, the runs of equal signatures, and signatures'
// known node hashes for renamedFingerprint. The member at position k of a
// group's order takes the group's k-th ID.
func (s *actorSymmetry) sortedMembers(m *ActorModel, g *GlobalState) ([][]int, []tieRun, []node.Hash) {
	ph := func(id node.ID) node.ID {
		if i, ok := m.index(id); ok && s.group[i] != 0 {
			return placeholder(s.group[i])
		}
		return id
	}
	sigs, known := m.signatures(g, s.group, ph)
	orders := make([][]int, len(s.groups))
	var runs []tieRun
	for k, grp := range s.groups {
		order := slices.Clone(grp)
		slices.SortStableFunc(order, func(a, b int) int { return cmpHash(sigs[a], sigs[b]) })
		orders[k] = order
		for lo := 0; lo < len(order); {
			hi := lo + 1
			for hi < len(order) && sigs[order[hi]] == sigs[order[lo]] {
				hi++
			}
			if hi-lo > 1 {
				runs = append(runs, tieRun{group: k, lo: lo, hi: hi})
			}
			lo = hi
		}
	}
	return orders, runs, known
}

// WithSymmetry returns a model with the same start state and symmetry
// reduction on (ActorOptions.Symmetry), or an error wrapping ErrNoSymmetry
// and ErrActorModel if the service declares no group among the model's
// nodes. Paths found by either model replay on both; fingerprints differ.
func (m *ActorModel) WithSymmetry() (*ActorModel, error) {
	c := m.WithIntercept(m.opts.Intercept)
	sym, err := newActorSymmetry(c)
	if err != nil {
		return nil, err
	}
	c.opts.Symmetry, c.sym = true, sym
	return c, nil
}
