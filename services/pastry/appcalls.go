package pastry

import "github.com/seed6eee2ec7/crystalball/node"

var (
	_ node.AppCaller = (*State)(nil)
	_ node.Restarter = (*State)(nil)
)

// AppCalls implements node.AppCaller: a node in StatusInit that knows its
// bootstrap may be asked to join through it. A fresh node knows none (the
// workload or RestartCalls supplies it), and a joining or joined node
// declares no call.
func (s *State) AppCalls(self node.ID) []node.Message {
	if s.Status != StatusInit || s.Bootstrap == node.None {
		return nil
	}
	return []node.Message{JoinOverlay{Bootstrap: s.Bootstrap}}
}

// RestartCalls implements node.Restarter: after a reset the application
// rejoins with the same identifier through the bootstrap the node had —
// the rapid rejoin of MaceMC's bug. A node that formed the overlay forms
// one again (the other nodes' probes find it and merge it back); a node
// that never joined has no bootstrap and is not restarted into the
// overlay.
func (s *State) RestartCalls(self node.ID) []node.Message {
	if s.Bootstrap == node.None {
		return nil
	}
	return []node.Message{JoinOverlay{Bootstrap: s.Bootstrap}}
}
