// Package staleview gives the scenario scripts of the examples' tests
// (package nodetest) the view the immediate safety check judges an event
// on: the node's own state after the event beside its peers' states from
// an earlier checkpoint. It is a test-support package, like nodetest:
// only tests import it.
package staleview

import (
	"fmt"
	"io"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// Commands returns the script commands
//
//	remember
//	    Keep a copy of every started node's state, as a gathered
//	    snapshot holds them.
//	check-view SELF
//	    Evaluate spec's safety properties on the view of SELF's current
//	    state and every other node's remembered one (its current one if
//	    it was not started at the last remember): one "NAME: ok" or
//	    "NAME: ERROR" line each.
//
// for a nodetest.Config of spec. Each call keeps its own remembered
// states: build one per script.
func Commands(spec func() node.Spec) map[string]nodetest.Command {
	var saved map[node.ID]node.Service
	return map[string]nodetest.Command{
		"remember": func(h *nodetest.Harness, args []string, _ io.Writer) error {
			if len(args) != 0 {
				return fmt.Errorf("staleview: usage: remember")
			}
			saved = map[node.ID]node.Service{}
			for _, id := range h.Nodes() {
				c, ok := h.Service(id).(node.Cloner)
				if !ok {
					return fmt.Errorf("staleview: %v's service (%T) is not a node.Cloner", id, h.Service(id))
				}
				saved[id] = c.Clone()
			}
			return nil
		},
		"check-view": func(h *nodetest.Harness, args []string, out io.Writer) error {
			if len(args) != 1 {
				return fmt.Errorf("staleview: usage: check-view SELF")
			}
			self, err := node.ParseID(args[0])
			if err != nil {
				return fmt.Errorf("staleview: check-view: %w", err)
			}
			v := view{h: h, self: self, saved: saved}
			for _, p := range spec().Properties {
				if p.Kind != node.Safety {
					continue
				}
				if err := p.Check(v); err != nil {
					fmt.Fprintf(out, "%s: %v\n", p.Name, err)
				} else {
					fmt.Fprintf(out, "%s: ok\n", p.Name)
				}
			}
			return nil
		},
	}
}

// view is the harness's nodes with every node but self at its remembered
// state.
type view struct {
	h     *nodetest.Harness
	self  node.ID
	saved map[node.ID]node.Service
}

func (v view) Nodes() []node.ID { return v.h.Nodes() }

func (v view) Service(id node.ID) node.Service {
	if s, ok := v.saved[id]; ok && id != v.self {
		return s
	}
	return v.h.Service(id)
}

func (v view) TimerScheduled(id node.ID, name string) bool {
	if _, ok := v.saved[id]; ok && id != v.self {
		return false // a remembered state's timers are not kept
	}
	return v.h.TimerScheduled(id, name)
}
