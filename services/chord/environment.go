package chord

import "github.com/seed6eee2ec7/crystalball/node"

var _ node.Environment = (*State)(nil)

// Hypothetical joiners (node.Environment). Their IDs are searched upwards
// from ArrivalBase, far above the IDs deployments and emulations number
// their nodes with, so that a prediction's joiner reads as one.
const (
	// ArrivalBase is the first ID tried for a hypothetical joiner.
	ArrivalBase node.ID = 1_000_000
	// Arrivals is how many joiners a joined node declares.
	Arrivals = 2
	// arrivalTries bounds the IDs tried, so that a node whose range holds
	// no identifier other IDs hash into declares fewer joiners instead of
	// searching for ever (a ring of n nodes needs about n tries a joiner).
	arrivalTries = 1 << 14
)

// Arrivals implements node.Environment: a joined node declares Arrivals
// nodes that may join the ring through it, each with the JoinOverlay call
// naming it as the bootstrap. Their IDs are the smallest from ArrivalBase
// whose identifiers lie strictly between the node and its successor (for
// a node alone on its ring, anywhere but the node), so the node itself is
// their identifiers' predecessor and answers their lookups: joins racing
// each other through one node, the paper's Figure 11. A node that is not
// joined cannot answer a lookup and declares none.
func (s *State) Arrivals(self node.ID) []node.Arrival {
	if s.Status != StatusJoined {
		return nil
	}
	r := s.ring
	me, succ := r.pos(self), r.pos(s.successor(self))
	var out []node.Arrival
	for k := range node.ID(arrivalTries) {
		id := ArrivalBase + k
		if id == self || !r.between(r.pos(id), me, succ) {
			continue
		}
		out = append(out, node.Arrival{ID: id, Calls: []node.Message{JoinOverlay{Bootstrap: self}}})
		if len(out) == Arrivals {
			break
		}
	}
	return out
}
