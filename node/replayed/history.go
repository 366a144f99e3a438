package replayed

import "github.com/seed6eee2ec7/crystalball/node"

// RecordHistory implements node.HistoryRecorder: an object's Invoke and
// Respond reach the node's own Env on a live step. A replayed step's
// marks were recorded when it was live (replayEnv records none).
func (e *recordEnv) RecordHistory(m node.HistoryMark) {
	if r, ok := e.Env.(node.HistoryRecorder); ok {
		r.RecordHistory(m)
	}
}

var _ node.HistoryRecorder = (*recordEnv)(nil)
