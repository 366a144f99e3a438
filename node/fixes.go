package node

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnknownFix is wrapped by Fixes.Enable's error for a name that is not
// one of the service's corrections.
var ErrUnknownFix = errors.New("unknown fix")

// Fix is one correction a service's options can turn on. The services of
// this repository reproduce a paper's bug by default; a Fix names the
// boolean option that corrects it, as `crystalball --fix NAME` and scenario
// scripts select it.
type Fix[O any] struct {
	// Name is the correction's name: lower case, words joined by dashes
	// ("keep-shadow"), never "all".
	Name string
	// Field returns the option in o that turns the correction on.
	Field func(o *O) *bool
}

// Fixes is a service's corrections, in bug order: what its options'
// EnableFix, Fixes and FixNames delegate to, so that every service reads
// --fix alike. A Fixes value is read-only after construction and safe for
// concurrent use.
type Fixes[O any] struct {
	// Service names the service in errors ("bullet: unknown fix ...").
	Service string
	// List are the corrections, in bug order.
	List []Fix[O]
}

// Names returns the corrections' names, in bug order, without "all".
func (f Fixes[O]) Names() []string {
	names := make([]string, len(f.List))
	for i, fix := range f.List {
		names[i] = fix.Name
	}
	return names
}

// All turns on every correction in o.
func (f Fixes[O]) All(o *O) {
	for _, fix := range f.List {
		*fix.Field(o) = true
	}
}

// Enable turns on the correction called name in o: one of Names, with or
// without a "fix-" prefix, or "all" for every one. An unknown name leaves
// o as it was and returns an error wrapping ErrUnknownFix that lists the
// names.
func (f Fixes[O]) Enable(o *O, name string) error {
	name = strings.TrimPrefix(name, "fix-")
	if name == "all" {
		f.All(o)
		return nil
	}
	for _, fix := range f.List {
		if fix.Name == name {
			*fix.Field(o) = true
			return nil
		}
	}
	return fmt.Errorf("%s: %w %q (want one of %s or all)", f.Service, ErrUnknownFix, name, strings.Join(f.Names(), ", "))
}

// Enabled returns the names of the corrections o turns on, in bug order
// (nil for none).
func (f Fixes[O]) Enabled(o O) []string {
	var out []string
	for _, fix := range f.List {
		if *fix.Field(&o) {
			out = append(out, fix.Name)
		}
	}
	return out
}
