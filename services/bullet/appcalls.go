package bullet

import "github.com/seed6eee2ec7/crystalball/node"

var (
	_ node.AppCaller = (*State)(nil)
	_ node.Restarter = (*State)(nil)
)

// AppCalls implements node.AppCaller: a started node declares no call (a
// node that has not started does not know its source, so it declares none
// either; the workload starts it).
func (s *State) AppCalls(self node.ID) []node.Message { return nil }

// RestartCalls implements node.Restarter: after a reset the application
// downloads again from the source the node had; a node that never started
// is not restarted into the download.
func (s *State) RestartCalls(self node.ID) []node.Message {
	if !s.started() {
		return nil
	}
	return []node.Message{Download{Source: s.Source}}
}
