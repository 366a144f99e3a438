// Package leaserace is a takeover on a timeout whose safety rests on two
// nodes' timers: a timeout race that only timer skew shows (the fault
// model's test service for timer skew).
//
// # The protocol
//
// Node 1 hands a job out (Start) to node 2, the primary, which owns it for
// Work and tells node 3, the backup, that it started (Started); the backup
// takes the job over Work + Margin after it heard, by its own timer, sure
// that the primary has given it up by then (however long Started took:
// the primary started before it sent it).
//
// # The race
//
// The margin covers the clocks of a deployment kept by NTP. But if each node's timers
// fire early or late by up to a skew bound, the timers of two nodes up to
// twice the bound apart fire in either order: with skew beyond Margin/2
// the backup can take over while the primary still owns the job
// (OneOwner). The explorer's virtual clock lets a timer fire while another
// node's timer due up to ClockSkew (100 ms) earlier is pending: with the
// Margin of 250 ms it never shows the race; with a declared skew bound
// (consequence.ActorOptions.TimerSkew, check --skew) of 150 ms it finds
// it, and so does an emulated run whose nodes' timers are skewed
// (emulation.NemesisConfig.TimerSkew, emulate --skew) when the skews drawn
// for its seed put the primary late and the backup early.
package leaserace

import (
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The nodes.
const (
	Coordinator node.ID = 1
	Primary     node.ID = 2
	Backup      node.ID = 3
)

// Timing: the primary owns the job for Work; the backup takes it over Work
// + Margin after Start.
const (
	Work   = time.Second
	Margin = 250 * time.Millisecond
)

// Start hands the job out; Started tells the backup the primary has it.
type (
	Start   struct{ node.Named[Start] }
	Started struct{ node.Named[Started] }
)

// Spec returns the service and its property: at most one node owns the
// job.
func Spec() node.Spec {
	return node.Spec{
		Name:       "leaserace",
		New:        func() node.Service { return &State{} },
		Messages:   []node.Message{Start{}, Started{}},
		Properties: []node.Property{node.Always("OneOwner", oneOwner)},
	}
}

// Workload is the service's: no application call.
func Workload(node.ID, bool) []node.Message { return nil }

// State is a node's state.
type State struct {
	node.NopHandlers
	// Owns is set while the node owns the job; Done once the primary gave
	// it up.
	Owns, Done bool
}

// String is the state on one line.
func (s *State) String() string { return fmt.Sprintf("owns=%v done=%v", s.Owns, s.Done) }

// Init implements node.Service: the coordinator hands the job out.
func (s *State) Init(env node.Env) {
	if env.Self() == Coordinator {
		env.Send(Primary, Start{})
	}
}

// HandleMessage implements node.Service: the primary takes the job, the
// backup arms its takeover.
func (s *State) HandleMessage(env node.Env, _ node.ID, msg node.Message) {
	switch msg.(type) {
	case Start:
		s.Owns = true
		env.SetTimer("finish", Work)
		env.Send(Backup, Started{})
	case Started:
		env.SetTimer("takeover", Work+Margin)
	}
}

// HandleTimer implements node.Service.
func (s *State) HandleTimer(_ node.Env, name string) {
	switch name {
	case "finish":
		s.Owns, s.Done = false, true
	case "takeover":
		s.Owns = true
	}
}

// oneOwner: at most one node owns the job.
func oneOwner(v node.View) error {
	var owners []node.ID
	for _, id := range v.Nodes() {
		if s, ok := v.Service(id).(*State); ok && s.Owns {
			owners = append(owners, id)
		}
	}
	if len(owners) > 1 {
		return fmt.Errorf("%v own the job", owners)
	}
	return nil
}
