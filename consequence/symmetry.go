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

// fingerprint is Fingerprint under symmetry: the fingerprint of g with the
// members of each group renamed by the permutation that sorts them by
// signature (see canonicalRename). Two states get equal fingerprints only
// if one is the other renamed (up to the random sources of group members,
// which the declaration says do not matter), whatever the ties. A crashed
// state is left as it is: it has no successors, and its crash report names
// a node in free text.
func (s *actorSymmetry) fingerprint(m *ActorModel, g *GlobalState) node.Hash {
	if g.crash != nil {
		return g.fp
	}
	rename, known := s.canonicalRename(m, g)
	return m.renamedFingerprint(g, rename, s.group, known)
}

// canonicalRename returns the renaming that puts g in canonical form: within
// each group, the members sorted by their signature (ties by ID) take the
// group's IDs in ascending order. Signatures are invariant under renaming
// the groups, so two states of one orbit get the same renamed form unless
// two members of a group tie with different surroundings; then the form is
// one of several, and the search merges fewer states than it could (never
// more).
//
// It also returns signatures' known node hashes, for renamedFingerprint.
func (s *actorSymmetry) canonicalRename(m *ActorModel, g *GlobalState) (func(node.ID) node.ID, []node.Hash) {
	ph := func(id node.ID) node.ID {
		if i, ok := m.index(id); ok && s.group[i] != 0 {
			return placeholder(s.group[i])
		}
		return id
	}
	sigs, known := m.signatures(g, s.group, ph)
	to := make(map[node.ID]node.ID)
	for _, grp := range s.groups {
		order := slices.Clone(grp)
		slices.SortStableFunc(order, func(a, b int) int { return cmpHash(sigs[a], sigs[b]) })
		for k, i := range order {
			to[m.ids[i]] = m.ids[grp[k]]
		}
	}
	return func(id node.ID) node.ID {
		if r, ok := to[id]; ok {
			return r
		}
		return id
	}, known
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
