package randtree

import "github.com/seed6eee2ec7/crystalball/node"

var (
	_ node.AppCaller = (*State)(nil)
	_ node.Restarter = (*State)(nil)
)

// AppCalls implements node.AppCaller: a node in StatusInit that knows
// bootstrap targets may be asked to join through them (JoinOverlay with its
// Targets). A node with no known targets, or one already joining or joined,
// declares no call. The returned call owns a copy of the targets.
func (s *State) AppCalls(self node.ID) []node.Message {
	if s.Status != StatusInit || len(s.Targets) == 0 {
		return nil
	}
	return []node.Message{JoinOverlay{Targets: append([]node.ID(nil), s.Targets...)}}
}

// RestartCalls implements node.Restarter: after a reset the application
// rejoins through the bootstrap targets the node had (JoinOverlay with its
// Targets); a node that never joined has none and is not restarted into the
// tree.
func (s *State) RestartCalls(self node.ID) []node.Message {
	if len(s.Targets) == 0 {
		return nil
	}
	return []node.Message{JoinOverlay{Targets: append([]node.ID(nil), s.Targets...)}}
}
