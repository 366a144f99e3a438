package snapshot

import (
	"fmt"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// View is a decoded Snapshot: the included nodes' states restored from
// their checkpoints, readable as a node.View (so a service's properties can
// be evaluated on it) and as node.States (to seed an explorer). It is
// independent of the Snapshot it came from.
type View struct {
	ids    []node.ID
	states []node.State
}

var _ node.View = (*View)(nil)

// Decode restores every checkpoint in s with factory (the service's
// Spec.New). Checkpoints are untrusted bytes from peers: a malformed one is
// an error wrapping node.ErrBadCheckpoint.
func (s *Snapshot) Decode(factory node.Factory) (*View, error) {
	v := &View{ids: make([]node.ID, 0, len(s.Nodes)), states: make([]node.State, 0, len(s.Nodes))}
	for _, nc := range s.Nodes {
		st, err := node.DecodeCheckpoint(nc.State, factory)
		if err != nil {
			return nil, fmt.Errorf("snapshot: checkpoint of %v: %w", nc.Node, err)
		}
		v.ids = append(v.ids, nc.Node)
		v.states = append(v.states, st)
	}
	return v, nil
}

// Nodes returns the included nodes, ascending (node.View). Read-only.
func (v *View) Nodes() []node.ID { return v.ids }

// State returns the restored state of id (nil if id is not included). It is
// the view's own: Clone it before stepping it.
func (v *View) State(id node.ID) *node.State {
	if i, ok := slices.BinarySearch(v.ids, id); ok {
		return &v.states[i]
	}
	return nil
}

// Service returns id's service state, or nil outside the snapshot
// (node.View).
func (v *View) Service(id node.ID) node.Service {
	if st := v.State(id); st != nil {
		return st.Service
	}
	return nil
}

// TimerScheduled reports whether id had the timer name scheduled at its
// checkpoint (node.View).
func (v *View) TimerScheduled(id node.ID, name string) bool {
	if st := v.State(id); st != nil {
		_, ok := st.TimerAt(name)
		return ok
	}
	return false
}
