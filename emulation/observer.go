package emulation

import (
	"fmt"
	"runtime/debug"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Violation is one post-event state in which a safety property does not
// hold, as passed to Config.OnViolation.
type Violation struct {
	// Property is the violated property's name.
	Property string
	// At is the virtual time of the state (for a bounded property, when
	// its bound passed: the state had lasted since the event before).
	At time.Time
	// Node is the node whose event produced the state.
	Node node.ID
	// Event is that event, as the trace names it.
	Event string
	// Err is the property's explanation.
	Err error
	// New is set on the first state of an episode (the property held in the
	// previous observed state).
	New bool
}

// safetyState is the observer's running record of one safety property.
type safetyState struct {
	prop     node.Property
	violated bool
	res      SafetyResult
}

// observe evaluates every safety property once on the post-event global
// state. The event (node id, ev, label) is only used to describe it.
func (e *Emulator) observe(id node.ID, ev node.Event, label string) {
	for i := range e.safety {
		s := &e.safety[i]
		err := e.check(s.prop, id, ev, label)
		if e.err != nil {
			return
		}
		if err == nil {
			s.violated = false
			continue
		}
		isNew := !s.violated
		s.violated = true
		s.res.ViolatedStates++
		if isNew {
			s.res.Episodes++
		}
		var desc string
		if s.res.ViolatedStates == 1 || e.cfg.OnViolation != nil {
			desc = string(appendDesc(append(appendID(nil, id), ' '), ev, label))
		}
		if s.res.ViolatedStates == 1 {
			s.res.FirstViolation = e.now
			s.res.FirstError = err.Error()
			s.res.FirstEvent = desc
		}
		if e.cfg.OnViolation != nil {
			e.cfg.OnViolation(Violation{Property: s.prop.Name, At: Epoch.Add(e.now), Node: id, Event: desc, Err: err, New: isNew})
		}
	}
	e.judgeTimed(id, ev, label)
	e.observeDeadEnds()
}

// check runs one property check, turning a panic into the loop's failure.
func (e *Emulator) check(p node.Property, id node.ID, ev node.Event, label string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e.fail(&PanicError{Node: id, Property: p.Name, Event: describe(ev, label), At: e.now, Seed: e.cfg.Seed, Value: r, Stack: debug.Stack()})
			err = nil
		}
	}()
	return p.Check(e.view)
}

// evalLiveness evaluates the liveness properties on the current state.
func (e *Emulator) evalLiveness() []LivenessResult {
	out := make([]LivenessResult, 0, len(e.liveness))
	for _, p := range e.liveness {
		out = append(out, e.checkLiveness(p))
	}
	return out
}

func (e *Emulator) checkLiveness(p node.Property) (r LivenessResult) {
	r.Name = p.Name
	defer func() {
		if v := recover(); v != nil {
			r.Holds = false
			r.Error = fmt.Sprintf("check panicked: %v", v)
		}
	}()
	if err := p.Check(e.view); err != nil {
		r.Error = err.Error()
		return r
	}
	r.Holds = true
	return r
}
