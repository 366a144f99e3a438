package tool

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Service is a service the command line runs: Main offers every subcommand
// for the services it is given, selected by --service NAME (the default is
// the first service given). Name, Spec and
// Workload are required; the other fields are optional and have the
// defaults their comments give (the papers' services, cli/papers, fill
// them all).
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

// Figure is one labelled number of a service's summary (Service.Summarize).
type Figure struct {
	Name  string `json:"name"`
	Value int    `json:"value"`
}

// figure is the name the experiments use for Figure.
type figure = Figure

// serviceRun is a service configured for one run (catalog.lookup): every
// optional field of its Service resolved to a function or a value.
type serviceRun struct {
	name     string
	spec     node.Spec
	workload func(id node.ID, restart bool) []node.Message
	// join gives a live node's application calls once it has started.
	join func(self node.ID, bootstrap []node.ID) []node.Message
	// summarize returns labelled figures of a view, in display order.
	summarize func(v node.View) []figure
	// describe renders the service's summary of a view as one line.
	describe func(v node.View) string
	// options describes the service configuration for reports.
	options string
}

// catalog is what a Program serves: its services by name, its models
// and its own commands.
type catalog struct {
	byName   map[string]Service
	names    []string // sorted
	first    string   // the first service given, the --service default
	models   []Model
	commands []Command
}

// newCatalog checks p (Program's, Service's, Command's and Model's
// contracts) and indexes its services.
func newCatalog(p Program) (*catalog, error) {
	services := p.Services
	if len(services) == 0 {
		return nil, errNoService
	}
	if err := validateCommands(p.Commands, builtinCommands()); err != nil {
		return nil, err
	}
	if err := validateModels(p.Models); err != nil {
		return nil, err
	}
	c := &catalog{byName: make(map[string]Service, len(services)), models: p.Models, commands: p.Commands}
	for i, s := range services {
		if s.Name == "" {
			s.Name = s.Spec.Name
		}
		if i == 0 {
			c.first = s.Name
		}
		switch {
		case s.Name == "" || strings.ContainsAny(s.Name, " \t\n,"):
			return nil, fmt.Errorf("cli: service %d: name %q is empty or has spaces or commas", i+1, s.Name)
		case s.Workload == nil:
			return nil, fmt.Errorf("cli: service %q: Workload is nil", s.Name)
		}
		if err := s.Spec.Validate(); err != nil {
			return nil, fmt.Errorf("cli: service %q: %w", s.Name, err)
		}
		if _, dup := c.byName[s.Name]; dup {
			return nil, fmt.Errorf("cli: service %q is given twice", s.Name)
		}
		c.byName[s.Name] = s
		c.names = append(c.names, s.Name)
	}
	slices.Sort(c.names)
	return c, nil
}

// has reports whether the catalog holds a service called name.
func (c *catalog) has(name string) bool {
	_, ok := c.byName[name]
	return ok
}

// list names the services for flag help and errors: "a, b, c".
// fixHelp is the --fix flag's help: the corrections of every service
// that names them (Service.Fixes).
func (c *catalog) fixHelp() string {
	var per []string
	for _, n := range c.names {
		if fx := c.byName[n].Fixes; len(fx) > 0 {
			per = append(per, n+": "+strings.Join(fx, ", "))
		}
	}
	h := "service corrections to apply: all, or a comma-separated list"
	if len(per) > 0 {
		h += " (" + strings.Join(per, "; ") + ")"
	}
	return h
}

func (c *catalog) list() string { return strings.Join(c.names, ", ") }

// defaultName is the --service default: the program's first service.
func (c *catalog) defaultName() string {
	if c.first == "" {
		return "-" // a catalog without services: only its flags' help is read
	}
	return c.first
}

// lookup resolves --service, --fix and --nodes to a configured service.
// An unknown service or correction is a usage error.
func (c *catalog) lookup(name string, fixes []string, nodes int) (serviceRun, error) {
	s, ok := c.byName[name]
	if !ok {
		return serviceRun{}, usagef("unknown service %q (known: %s)", name, c.list())
	}
	if s.Configure != nil {
		configured, err := s.Configure(fixes, nodes)
		if err != nil {
			return serviceRun{}, usageError{fmt.Errorf("service %s: %w", name, err)}
		}
		if configured.Workload == nil {
			return serviceRun{}, fmt.Errorf("cli: service %s: Configure returned no Workload", name)
		}
		if err := configured.Spec.Validate(); err != nil {
			return serviceRun{}, fmt.Errorf("cli: service %s: Configure: %w", name, err)
		}
		s = configured
	} else if len(fixes) > 0 {
		return serviceRun{}, usagef("service %s takes no corrections (--fix %s)", name, strings.Join(fixes, ","))
	}
	return resolve(name, s), nil
}

// resolve fills a Service's optional fields with their defaults.
func resolve(name string, s Service) serviceRun {
	r := serviceRun{name: name, spec: s.Spec, workload: s.Workload, join: s.Join,
		summarize: s.Summarize, describe: s.Describe, options: s.Options}
	if r.join == nil {
		r.join = func(self node.ID, _ []node.ID) []node.Message { return s.Workload(self, false) }
	}
	if r.summarize == nil {
		r.summarize = func(v node.View) []Figure { return []Figure{{Name: "nodes", Value: len(v.Nodes())}} }
	}
	if r.describe == nil {
		sum := r.summarize
		r.describe = func(v node.View) string {
			var parts []string
			for _, f := range sum(v) {
				parts = append(parts, f.Name+"="+strconv.Itoa(f.Value))
			}
			return strings.Join(parts, " ")
		}
	}
	if r.options == "" {
		r.options = "default"
	}
	return r
}

// SplitList splits a comma-separated flag value, dropping empty items.
func SplitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
