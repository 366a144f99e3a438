package node

import (
	"errors"
	"fmt"
)

// Spec describes a service to the runtimes: how to build it, what it sends,
// what must hold of it. A service package exports a function returning its
// Spec for a given set of options.
type Spec struct {
	// Name identifies the service (e.g. "randtree").
	Name string
	// New builds a fresh service value (see Factory).
	New Factory
	// Messages are prototypes of every message and application call the
	// service uses; they form its Registry. Sending or calling a message
	// missing here is the service's bug in every host alike
	// (Registry.CheckMessage): the explorer rejects the model, the
	// emulator fails the run.
	Messages []Message
	// Properties are the service's safety and liveness properties.
	Properties []Property
	// Delivery declares how the service's messages may travel (see
	// Delivery); the zero value keeps every message reliable.
	Delivery DeliverySpec
}

// Registry builds the registry of s.Messages.
func (s Spec) Registry() (*Registry, error) {
	r, err := NewRegistry(s.Messages...)
	if err != nil {
		return nil, fmt.Errorf("node: service %q: %w", s.Name, err)
	}
	return r, nil
}

// Validate checks that the spec is complete and consistent.
func (s Spec) Validate() error {
	if s.Name == "" {
		return errors.New("node: Spec.Name is required")
	}
	if s.New == nil {
		return fmt.Errorf("node: service %q: Spec.New is required", s.Name)
	}
	reg, err := s.Registry()
	if err != nil {
		return err
	}
	if err := s.Delivery.validate(reg); err != nil {
		return fmt.Errorf("node: service %q: %w", s.Name, err)
	}
	seen := make(map[string]bool, len(s.Properties))
	for _, p := range s.Properties {
		if p.Name == "" || p.Check == nil || !p.Kind.known() {
			return fmt.Errorf("node: service %q: property %q is incomplete", s.Name, p.Name)
		}
		if err := p.validateKind(); err != nil {
			return fmt.Errorf("node: service %q: property %q: %w", s.Name, p.Name, err)
		}
		if seen[p.Name] {
			return fmt.Errorf("node: service %q: duplicate property %q", s.Name, p.Name)
		}
		seen[p.Name] = true
	}
	return nil
}

// PropertiesOf returns the properties of the given kind, in spec order.
func (s Spec) PropertiesOf(kind PropertyKind) []Property {
	var out []Property
	for _, p := range s.Properties {
		if p.Kind == kind {
			out = append(out, p)
		}
	}
	return out
}
