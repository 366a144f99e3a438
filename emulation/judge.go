package emulation

import (
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Properties over time. The observer judges every bounded property
// (node.Within) on the global state after every event, as it judges the
// safety properties, and every liveness property at the resolution of
// TimedConfig.Every, and keeps how long each held over the run: its
// availability, and its outages. An outage of a
// liveness property is an interval in which it failed; an outage of a
// bounded property is an obligation (its precondition held and its goal
// did not) that lasted past the bound, found when the bound passes — an
// OnViolation call at that moment, not only at the end — and measured
// from the obligation's opening to its closing. The rule that judges a
// bounded property is node.Obligation's, the explorer's too.

// DefaultTimedEvery is TimedConfig.Every's default.
const DefaultTimedEvery = time.Second

// TimedConfig sets how often the observer judges the liveness properties
// over time. Evaluating every liveness property after every event
// doubled the CPU of a 100-node RandTree run (five liveness properties
// over the whole tree); every 100 ms of virtual time still cost a 50-node
// run 9% more instructions, every second 2.7% (docs/PERFORMANCE.md):
// availability and outages are measured to that resolution, which runs
// of minutes afford.
type TimedConfig struct {
	// Every is the resolution of the liveness properties' judgement: they
	// are judged after the first event at least Every of virtual time after
	// the last judgement, and their verdict stands until the next. A
	// bounded property (node.Within) is judged after every event whatever
	// Every says: its outages are what its bound is about. Zero means
	// DefaultTimedEvery; a nanosecond judges after every event; negative
	// is an error.
	Every time.Duration
}

// MaxOutages is how many outages a TimedResult lists (the first ones);
// Outages counts them all.
const MaxOutages = 32

// Outage is one interval in which a property did not hold.
type Outage struct {
	// Start is when it began (for a bounded property, when the obligation
	// opened), Length how long it lasted.
	Start  time.Duration `json:"start_ns"`
	Length time.Duration `json:"length_ns"`
	// Ongoing is set on an outage that had not ended when the result was
	// taken (Length is up to then).
	Ongoing bool `json:"ongoing,omitempty"`
	// Error is the property's error when the outage began (a bounded
	// property's goal, when it passed its bound).
	Error string `json:"error,omitempty"`
}

// TimedResult is one liveness or bounded property judged over the run.
type TimedResult struct {
	Name string `json:"name"`
	// Kind is "liveness" or "bounded".
	Kind string `json:"kind"`
	// Bound is a bounded property's bound (zero for liveness).
	Bound time.Duration `json:"bound_ns,omitempty"`
	// Availability is the fraction of the run's virtual time in which the
	// property held (for a bounded property: its obligation was closed —
	// its goal held or its precondition did not). 1 for a run of no time.
	Availability float64 `json:"availability"`
	// Outages counts the outages; List holds the first MaxOutages, in
	// order; Longest is the longest (zero Length: none).
	Outages int64    `json:"outages"`
	List    []Outage `json:"list,omitempty"`
	Longest Outage   `json:"longest"`
}

// timedState is the observer's running record of one property over time.
type timedState struct {
	prop  node.Property
	holds bool
	// next is when a liveness property is judged again (TimedConfig).
	next time.Duration
	// since is when holds last changed, held the time it held before.
	since, held time.Duration
	// obl is a bounded property's obligation; cur the outage under way
	// (a failing liveness property's, a late obligation's), curSet when
	// there is one.
	obl    node.Obligation
	cur    Outage
	curSet bool
	res    TimedResult
}

// newTimed returns the record of a liveness or bounded property: it holds
// until the first observation says otherwise.
func newTimed(p node.Property) timedState {
	return timedState{prop: p, holds: true, res: TimedResult{Name: p.Name, Kind: p.Kind.String(), Bound: p.Bound}}
}

// judgeTimed takes in the global state after an event at e.now: every
// timed property's verdict, a bounded property's passed deadline (which
// happened at its due time, the state having stayed as it was since the
// last event) reported through OnViolation.
func (e *Emulator) judgeTimed(id node.ID, ev node.Event, label string) {
	for i := range e.timed {
		t := &e.timed[i]
		switch {
		case t.prop.Kind == node.Bounded:
			e.judgeBounded(t, id, ev, label)
		case e.now >= t.next:
			t.next = e.now + e.timedEvery()
			err := e.checkTimed(t.prop)
			t.observe(e.now, err == nil, err)
		}
		if e.err != nil {
			return
		}
	}
}

// judgeBounded advances a bounded property's obligation to the state after
// an event.
func (e *Emulator) judgeBounded(t *timedState, id node.ID, ev node.Event, label string) {
	now := Epoch.Add(e.now)
	o, late := t.obl.Elapse(now, t.prop.Bound)
	if late {
		goal := t.lastErr()
		t.cur = Outage{Start: o.Since.Sub(Epoch), Error: goal}
		t.curSet = true
		if e.cfg.OnViolation != nil {
			err := &node.OverdueError{Property: t.prop.Name, Bound: t.prop.Bound, Since: o.Since, At: o.Due(t.prop.Bound), Goal: errString(goal)}
			desc := string(appendDesc(append(appendID(nil, id), ' '), ev, label))
			e.cfg.OnViolation(Violation{Property: t.prop.Name, At: o.Due(t.prop.Bound), Node: id, Event: desc, Err: err, New: true})
		}
	}
	var pending bool
	var goal error
	func() {
		defer e.recoverProperty(t.prop, id, ev, label)
		pending, goal = t.prop.Pending(e.view)
	}()
	if e.err != nil {
		return
	}
	t.obl = o.Observe(now, pending)
	if pending && !o.Open {
		t.cur.Error = ""
		if goal != nil {
			t.cur.Error = goal.Error()
		}
	}
	if !t.obl.Open && t.curSet {
		t.endOutage(e.now)
	}
	t.setHolds(e.now, !t.obl.Open)
}

// lastErr is the goal's error recorded when the obligation opened.
func (t *timedState) lastErr() string { return t.cur.Error }

// observe takes in a liveness property's verdict at now.
func (t *timedState) observe(now time.Duration, holds bool, err error) {
	if !holds && t.holds {
		t.cur = Outage{Start: now}
		if err != nil {
			t.cur.Error = err.Error()
		}
		t.curSet = true
	}
	if holds && t.curSet {
		t.endOutage(now)
	}
	t.setHolds(now, holds)
}

// setHolds records the verdict at now.
func (t *timedState) setHolds(now time.Duration, holds bool) {
	if holds == t.holds {
		return
	}
	if t.holds {
		t.held += now - t.since
	}
	t.holds, t.since = holds, now
}

// endOutage closes the outage under way at now.
func (t *timedState) endOutage(now time.Duration) {
	o := t.cur
	o.Length = now - o.Start
	t.add(o)
	t.cur, t.curSet = Outage{}, false
}

// add counts an outage.
func (t *timedState) add(o Outage) {
	t.res.Outages++
	if len(t.res.List) < MaxOutages {
		t.res.List = append(t.res.List, o)
	}
	if o.Length > t.res.Longest.Length {
		t.res.Longest = o
	}
}

// result returns the property's record as of now (an outage under way
// counts, Ongoing, up to now; a bounded obligation that is due by now is
// late).
func (t timedState) result(now time.Duration) TimedResult {
	r := t.res
	r.List = append([]Outage(nil), r.List...)
	held := t.held
	if t.holds {
		held += now - t.since
	}
	r.Availability = 1
	if now > 0 {
		r.Availability = float64(held) / float64(now)
	}
	cur, ok := t.cur, t.curSet
	if !ok && t.prop.Kind == node.Bounded && t.obl.Open && now > t.obl.Due(t.prop.Bound).Sub(Epoch) {
		cur, ok = Outage{Start: t.obl.Since.Sub(Epoch), Error: t.cur.Error}, true
	}
	if ok {
		cur.Length, cur.Ongoing = now-cur.Start, true
		t.res = r
		t.add(cur)
		r = t.res
	}
	return r
}

// checkTimed evaluates a liveness property during the run: a panic counts
// as not holding (as at the end), since such a check never stopped a run.
func (e *Emulator) checkTimed(p node.Property) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = panicked{v}
		}
	}()
	return p.Check(e.view)
}

// recoverProperty turns a bounded property's panic into the loop's
// failure, as a safety property's (check).
func (e *Emulator) recoverProperty(p node.Property, id node.ID, ev node.Event, label string) {
	if r := recover(); r != nil {
		e.fail(panicError(e, p, id, ev, label, r))
	}
}

func panicError(e *Emulator, p node.Property, id node.ID, ev node.Event, label string, r any) error {
	return &PanicError{Node: id, Property: p.Name, Event: describe(ev, label), At: e.now, Seed: e.cfg.Seed, Value: r, Stack: debug.Stack()}
}

type panicked struct{ v any }

func (p panicked) Error() string { return fmt.Sprintf("check panicked: %v", p.v) }

type stringError string

func (s stringError) Error() string { return string(s) }

func errString(s string) error {
	if s == "" {
		return nil
	}
	return stringError(s)
}

// timedEvery is TimedConfig.Every with its default.
func (e *Emulator) timedEvery() time.Duration {
	if e.cfg.Timed.Every == 0 {
		return DefaultTimedEvery
	}
	return e.cfg.Timed.Every
}

// timedResults returns every timed property's record as of now.
func (e *Emulator) timedResults() []TimedResult {
	if len(e.timed) == 0 {
		return nil
	}
	out := make([]TimedResult, len(e.timed))
	for i, t := range e.timed {
		out[i] = t.result(e.now)
	}
	return out
}

// writeTimed renders the bounded properties over time, one line each:
// "availability CaughtUpWithin (bounded 10s): 71.4% of 1m0s, 1 outage,
// longest 17.2s from 6.1s: n2 has 3 of 9 entries". (The liveness
// properties' lines are emulate's summary's: Result.String prints them as
// it always did.)
func writeTimed(b *strings.Builder, ts []TimedResult, of time.Duration) {
	for _, t := range ts {
		if t.Bound == 0 {
			continue
		}
		kind := t.Kind
		if t.Bound > 0 {
			kind = fmt.Sprintf("%s %v", t.Kind, t.Bound)
		}
		fmt.Fprintf(b, "availability %s (%s): %.1f%% of %v", t.Name, kind, 100*t.Availability, of.Round(time.Millisecond))
		switch {
		case t.Outages == 0:
			b.WriteString(", no outage\n")
			continue
		case t.Outages == 1:
			b.WriteString(", 1 outage")
		default:
			fmt.Fprintf(b, ", %d outages", t.Outages)
		}
		l := t.Longest
		fmt.Fprintf(b, ", longest %v from %v", l.Length.Round(time.Millisecond), l.Start.Round(time.Millisecond))
		if l.Ongoing {
			b.WriteString(" (ongoing)")
		}
		if l.Error != "" {
			fmt.Fprintf(b, ": %s", l.Error)
		}
		b.WriteByte('\n')
	}
}
