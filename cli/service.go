package cli

import (
	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
	"github.com/seed6eee2ec7/crystalball/node"
)

// Service is a service the command line runs: Main offers every
// subcommand for the services it is given, selected by --service NAME
// (the default is the first service given). Spec and Workload are
// required; the other fields are optional and have the defaults their
// comments give (the papers' services, cli/papers, fill them all).
//
// The snapshot neighbourhood of a node is not a field: it is the service
// state's optional node.Neighborer method, which the snapshot managers of
// every shell read (without it, a node's neighbours are the peers it
// exchanged messages with recently).
type Service struct {
	// Name selects the service (--service) and is recorded in every
	// report, so that 'trace show' finds the service again. Empty means
	// Spec.Name, the service's one name; set it only to serve one Spec
	// under several names (two configurations of it, say). It must be
	// without spaces or commas, and unique among the services given to
	// Main.
	Name string
	// Spec is the service: its state factory, messages and properties. It
	// must be valid (node.Spec.Validate). With Configure set, the spec
	// Configure returns replaces it for every run.
	Spec node.Spec
	// Workload returns the application calls a node receives right after
	// it starts (restart false) and after every reset (restart true), in
	// emulation ('emulate') and exploration ('check'). It must be
	// deterministic. It may return nil.
	Workload func(id node.ID, restart bool) []node.Message

	// Configure, when set, returns the service configured for a run: with
	// the corrections --fix names (fixes: its comma-separated items, such
	// as "all"; empty without --fix) and for nodes nodes (the --nodes of
	// 'emulate' and 'check', IDs 1..nodes; 0 for a live node unless
	// --nodes is given). It is called with every run, even without --fix;
	// an unknown correction is an error, which the CLI reports as bad
	// usage. Nil: the service takes no corrections (--fix is bad usage) and
	// runs as Spec, Workload and Options say.
	Configure func(fixes []string, nodes int) (Service, error)
	// Fixes names the corrections Configure accepts (besides "all"), for
	// the --fix flag's help; nil lists none. Configure stays the judge of
	// what is valid.
	Fixes []string
	// Join returns the application calls a live node ('crystalball node')
	// issues once it has started: bootstrap holds the IDs of the nodes
	// behind --join (learned in the transport's handshake), empty for the
	// first node of a cluster. Nil: Workload(self, false).
	Join func(self node.ID, bootstrap []node.ID) []node.Message
	// Summarize returns labelled figures of a view (the final state of an
	// emulated run), in display order. Nil: the number of nodes up.
	Summarize func(v node.View) []Figure
	// Describe renders a view's summary on one line (the human output of
	// 'emulate'). Nil: the figures of Summarize as name=value pairs.
	Describe func(v node.View) string
	// Options describes the service's configuration (the options a
	// correction changed, say) in reports and in a live node's /status.
	// Empty: "default".
	Options string
}

// Figure is one labelled number of a service's summary
// (Service.Summarize), as 'emulate' prints it and its JSON holds it.
type Figure struct {
	Name  string `json:"name"`
	Value int    `json:"value"`
}

// internal returns s in the form the subcommands run (package
// cli/internal/tool's, which cannot import this package).
func (s Service) internal() tool.Service {
	t := tool.Service{Name: s.Name, Spec: s.Spec, Workload: s.Workload, Fixes: s.Fixes,
		Join: s.Join, Describe: s.Describe, Options: s.Options}
	if configure := s.Configure; configure != nil {
		t.Configure = func(fixes []string, nodes int) (tool.Service, error) {
			c, err := configure(fixes, nodes)
			return c.internal(), err
		}
	}
	if summarize := s.Summarize; summarize != nil {
		t.Summarize = func(v node.View) []tool.Figure {
			figs := summarize(v)
			out := make([]tool.Figure, len(figs))
			for i, f := range figs {
				out[i] = tool.Figure(f)
			}
			return out
		}
	}
	return t
}
