package tool

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// Model is a cli.Model, whose comments state its contract: a hand-written
// model 'check --model NAME' explores instead of a service (package cli
// converts its own to this type).
type Model struct {
	Name  string
	Flags func(fs *flag.FlagSet) func(symmetry bool) (*ModelSearch, error)
}

// ModelSearch is a model ready for check, made by NewModelSearch.
type ModelSearch struct {
	nodes   int
	options string
	run     func(ctx context.Context, opts consequence.Options, out *checkOutput) error
}

// NewModelSearch returns the search of m against props for check: nodes
// is how many processes the model has and options its configuration
// ("rms=3,symmetry"), both as check's output and reports name them.
func NewModelSearch[S, A any](m consequence.Model[S, A], props []consequence.Property[S], nodes int, options string) *ModelSearch {
	return &ModelSearch{nodes: nodes, options: options, run: func(ctx context.Context, opts consequence.Options, out *checkOutput) error {
		res, err := consequence.NewChecker(m).Properties(props...).WithOptions(opts).Run(ctx)
		if res != nil {
			fillResult(out, res)
		}
		return err
	}}
}

// validateModels checks the models' names and that their flags define
// nothing check (or another model) defines.
func validateModels(models []Model) error {
	if err := checkModelNames(models); err != nil {
		return err
	}
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the flag package prints a redefinition before it panics
	(&checkFlags{}).register(fs, &catalog{})
	for _, m := range models {
		if err := defineModelFlags(fs, m); err != nil {
			return err
		}
	}
	return nil
}

// checkModelNames checks that each model has a name of its own, without
// spaces or commas, and flags.
func checkModelNames(models []Model) error {
	seen := map[string]bool{}
	for i, m := range models {
		switch {
		case m.Name == "" || strings.ContainsAny(m.Name, " \t\n,"):
			return fmt.Errorf("cli: model %d: name %q is empty or has spaces or commas", i+1, m.Name)
		case seen[m.Name]:
			return fmt.Errorf("cli: model %q is given twice", m.Name)
		case m.Flags == nil:
			return fmt.Errorf("cli: model %q: Flags is nil", m.Name)
		}
		seen[m.Name] = true
	}
	return nil
}

// defineModelFlags calls m.Flags on fs and turns the flag package's panic
// on a flag defined twice into an error.
func defineModelFlags(fs *flag.FlagSet, m Model) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cli: model %q: its flags: %v", m.Name, r)
		}
	}()
	if m.Flags(fs) == nil {
		return fmt.Errorf("cli: model %q: Flags returned no builder", m.Name)
	}
	return nil
}

// modelNames lists the models for --model's help: "a, b" or "none".
func (c *catalog) modelNames() string {
	if len(c.models) == 0 {
		return "none in this program"
	}
	names := make([]string, len(c.models))
	for i, m := range c.models {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}
