package papers

import (
	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/macetransport"
)

// macetransportCount is how many messages the test application sends:
// MaceMC's case, "a sender attempts to send two messages to a receiver".
const macetransportCount = 2

// buildMaceTransport configures MaceTransport as MaceMC's case study runs
// it: node 1 sends two messages to node 2 when it starts (with --nodes 1 it
// has nobody to send to and the run is idle); --fix monotone-syn (or all)
// applies the paper's correction. A live node sends its two messages to
// the next node ID, wrapping around the cluster of --nodes N (node N sends
// to node 1), or to the first node behind --join when the cluster size is
// not given: so every node of a live cluster is a sender and a receiver,
// and the cluster has converged when every message is acknowledged.
func buildMaceTransport(fixes []string, nodes int) (tool.Service, error) {
	opts := macetransport.DefaultOptions()
	for _, f := range fixes {
		if err := opts.EnableFix(f); err != nil {
			return tool.Service{}, err
		}
	}
	spec, err := macetransport.NewSpec(opts)
	if err != nil {
		return tool.Service{}, err
	}
	return tool.Service{
		Name:     macetransport.Name,
		Spec:     spec,
		Workload: macetransportWorkload(nodes),
		Join:     macetransportJoin(nodes),
		Summarize: func(v node.View) []tool.Figure {
			s := macetransport.Summarize(v)
			return []tool.Figure{
				{Name: "sent", Value: s.Sent},
				{Name: "unacked", Value: s.Unacked},
				{Name: "delivered", Value: s.Delivered},
				{Name: "connections", Value: s.Connections},
				{Name: "failures", Value: s.Failures},
			}
		},
		Describe: func(v node.View) string { return macetransport.Summarize(v).String() },
		Options:  opts.String(),
	}, nil
}

// macetransportWorkload is the test application's calls on a node of a
// cluster of nodes (0: not given): node 1 sends its two messages to node
// 2 when it first starts, unless it is alone.
func macetransportWorkload(nodes int) func(id node.ID, restart bool) []node.Message {
	return func(id node.ID, restart bool) []node.Message {
		if id != 1 || restart || (nodes != 0 && nodes < 2) {
			return nil
		}
		return []node.Message{macetransport.SendMessages{To: 2, Count: macetransportCount}}
	}
}

// macetransportJoin is a live node's calls once it has joined: its two
// messages to its receiver (macetransportReceiver), none without one.
func macetransportJoin(nodes int) func(self node.ID, bootstrap []node.ID) []node.Message {
	return func(self node.ID, bootstrap []node.ID) []node.Message {
		to := macetransportReceiver(self, bootstrap, nodes)
		if to == node.None || to == self {
			return nil
		}
		return []node.Message{macetransport.SendMessages{To: to, Count: macetransportCount}}
	}
}

// macetransportReceiver is the node a live node sends to: the next node
// ID of a cluster of nodes (node N sends to node 1), or, when the cluster
// size is not given, the first node behind --join (none without one).
func macetransportReceiver(self node.ID, bootstrap []node.ID, nodes int) node.ID {
	switch {
	case nodes >= 2:
		return self%node.ID(nodes) + 1
	case len(bootstrap) > 0:
		return bootstrap[0]
	}
	return node.None
}
