package tool

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Service is a cli.Service in the form the subcommands run: package cli
// converts its own (this package cannot import it), and cli/papers builds
// the papers' services in this form. Its fields are cli.Service's, whose
// comments state their contract and defaults.
type Service struct {
	Name      string
	Spec      node.Spec
	Workload  func(id node.ID, restart bool) []node.Message
	Configure func(fixes []string, nodes int) (Service, error)
	Fixes     []string
	Join      func(self node.ID, bootstrap []node.ID) []node.Message
	Summarize func(v node.View) []Figure
	Describe  func(v node.View) string
	Options   string
}

// Figure is a cli.Figure: one labelled number of a service's summary.
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
	if err := firstFailingStep(
		func() error { return validateCommands(p.Commands, builtinCommands()) },
		func() error { return validateModels(p.Models) }, // runs the models' Flags
	); err != nil {
		return nil, err
	}
	c := &catalog{byName: make(map[string]Service, len(services)), models: p.Models, commands: p.Commands}
	for i, s := range services {
		if err := c.add(i, s); err != nil {
			return nil, err
		}
	}
	slices.Sort(c.names)
	return c, nil
}

// add checks the program's service i (0-based) and indexes it under its
// name (its spec's when it names none); the first is the default.
func (c *catalog) add(i int, s Service) error {
	if s.Name == "" {
		s.Name = s.Spec.Name
	}
	if i == 0 {
		c.first = s.Name
	}
	if err := checkProgramService(i, s); err != nil {
		return err
	}
	if _, dup := c.byName[s.Name]; dup {
		return fmt.Errorf("cli: service %q is given twice", s.Name)
	}
	c.byName[s.Name] = s
	c.names = append(c.names, s.Name)
	return nil
}

// checkProgramService checks Service's contract on the program's service i
// (0-based): a name without spaces or commas, a Workload, a valid spec.
func checkProgramService(i int, s Service) error {
	if err := FirstBrokenRule(
		UsageRule{s.Name == "" || strings.ContainsAny(s.Name, " \t\n,"), fmt.Errorf("cli: service %d: name %q is empty or has spaces or commas", i+1, s.Name)},
		UsageRule{s.Workload == nil, fmt.Errorf("cli: service %q: Workload is nil", s.Name)},
	); err != nil {
		return err
	}
	if err := s.Spec.Validate(); err != nil {
		return fmt.Errorf("cli: service %q: %w", s.Name, err)
	}
	return nil
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
		configured, err := configureService(name, s, fixes, nodes)
		if err != nil {
			return serviceRun{}, err
		}
		s = configured
	} else if len(fixes) > 0 {
		return serviceRun{}, usagef("service %s takes no corrections (--fix %s)", name, strings.Join(fixes, ","))
	}
	return resolve(name, s), nil
}

// configureService runs service name's Configure (s.Configure, not nil) for
// fixes and nodes and checks its contract on the result; its own error
// is a usage error.
func configureService(name string, s Service, fixes []string, nodes int) (Service, error) {
	configured, err := s.Configure(fixes, nodes)
	if err != nil {
		return Service{}, usageError{fmt.Errorf("service %s: %w", name, err)}
	}
	if configured.Workload == nil {
		return Service{}, fmt.Errorf("cli: service %s: Configure returned no Workload", name)
	}
	if err := configured.Spec.Validate(); err != nil {
		return Service{}, fmt.Errorf("cli: service %s: Configure: %w", name, err)
	}
	return configured, nil
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
		r.describe = describeFigures(r.summarize)
	}
	if r.options == "" {
		r.options = "default"
	}
	return r
}

// describeFigures is the default Describe of a service: its summary's
// figures as "name=value" words.
func describeFigures(sum func(v node.View) []figure) func(v node.View) string {
	return func(v node.View) string {
		var parts []string
		for _, f := range sum(v) {
			parts = append(parts, f.Name+"="+strconv.Itoa(f.Value))
		}
		return strings.Join(parts, " ")
	}
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
