package macetransport

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/viewstate"
)

// Summary is a few statistics of the transport in a view, for progress
// lines and the CLI.
type Summary struct {
	// Nodes is the number of MaceTransport nodes in the view.
	Nodes int
	// Sent is how many application messages the nodes sent.
	Sent int
	// Unacked is how many of them wait for an acknowledgment.
	Unacked int
	// Delivered is how many messages the receivers delivered to their
	// application on their current incoming connections.
	Delivered int
	// Connections is the number of outgoing connections.
	Connections int
	// Failures is how many connections were closed after repeated
	// timeouts.
	Failures int
}

// Summarize computes the Summary of v.
func Summarize(v node.View) Summary {
	var sum Summary
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		if s == nil {
			continue
		}
		sum.Nodes++
		sum.Sent += int(s.NextMsg)
		sum.Unacked += s.Pending()
		sum.Connections += len(s.Out)
		sum.Failures += int(s.Failures)
		for _, c := range s.In {
			sum.Delivered += int(c.Total)
		}
	}
	return sum
}

// String renders the summary, e.g. "2 nodes: 2 messages sent, 0
// unacknowledged, 2 delivered, 1 connections, 0 failed".
func (s Summary) String() string {
	return fmt.Sprintf("%d nodes: %d messages sent, %d unacknowledged, %d delivered, %d connections, %d failed",
		s.Nodes, s.Sent, s.Unacked, s.Delivered, s.Connections, s.Failures)
}
