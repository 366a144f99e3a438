package consequence

import (
	"fmt"
	"strings"
	"time"
)

// Path is a sequence of actions from a start state, as violations, walks
// and periphery states carry it. It is a plain slice: Replay and
// FindCriticalTransition take it as one.
type Path[A any] []Action[A]

// String renders the path on one line, its actions' Act (their String
// methods, as %v prints them) separated by "; ", e.g. "n1 app
// randtree.JoinOverlay; n9 deliver randtree.Join from n1"; an empty path is
// "(empty path)".
func (p Path[A]) String() string {
	if len(p) == 0 {
		return "(empty path)"
	}
	var b strings.Builder
	for i, a := range p {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprint(&b, a.Act)
	}
	return b.String()
}

// String renders the action as its Act does (%v): the node and kind tags
// are for the search strategies, and the model's action names its node
// already (ActorAction's String starts with it).
func (a Action[A]) String() string { return fmt.Sprint(a.Act) }

// String renders the violation on one line: kind, property, depth, the
// property's error and the path, e.g. `safety "disjoint" violated at depth
// 2: n9 is both child and sibling [path: n1 timer go; n9 deliver
// test.Join from n1]`.
func (v Violation[S, A]) String() string {
	return fmt.Sprintf("%v %q violated at depth %d: %v [path: %v]", v.Kind, v.Property, v.Depth, v.Err, v.Path)
}

// String renders the state's position, e.g. "depth 2: n1 timer go; n2
// deliver test.Note from n1".
func (p PathState[S, A]) String() string {
	return fmt.Sprintf("depth %d: %v", len(p.Path), p.Path)
}

// String summarises the search on one line, e.g. "consequence, 2 workers:
// depth budget after 1,204 states (3,310 generated, 56 pruned) to depth
// 7 in 12ms, 1 violation". Elapsed is rounded to the millisecond.
func (r *Result[S, A]) String() string {
	return fmt.Sprintf("%v, %s: %v after %s (%s generated, %s pruned) to depth %d in %v, %s",
		r.Strategy, plural(r.Workers, "worker"), r.Stop, plural(int(r.Unique), "state"),
		thousands(r.Generated), thousands(r.Pruned), r.Depth, r.Elapsed.Round(time.Millisecond),
		plural(len(r.Violations), "violation"))
}

// String renders the progress report on one line, e.g. "depth 3 done: 40
// to expand, 112 states (150 generated, 0 pruned), 0 violations, 1.2s".
// Elapsed is rounded to the millisecond.
func (p Progress) String() string {
	return fmt.Sprintf("depth %d done: %s to expand, %s (%s generated, %s pruned), %s, %v",
		p.Depth, thousands(uint64(p.Frontier)), plural(int(p.Unique), "state"), thousands(p.Generated),
		thousands(p.Pruned), plural(p.Violations, "violation"), p.Elapsed.Round(time.Millisecond))
}

// String renders the failure as "property: error".
func (e PropertyError) String() string { return fmt.Sprintf("%s: %v", e.Property, e.Err) }

// String renders the walk on one line: "live after N steps", or "not live
// after N steps: p: error, q: error" with the properties that fail in its
// last state. The path is left out (it is up to DMax steps); print
// w.Path for it.
func (w Walk[S, A]) String() string {
	if w.Live {
		return fmt.Sprintf("live after %s", plural(len(w.Path), "step"))
	}
	fails := make([]string, len(w.Failing))
	for i, f := range w.Failing {
		fails[i] = f.String()
	}
	return fmt.Sprintf("not live after %s: %s", plural(len(w.Path), "step"), strings.Join(fails, ", "))
}

// String renders the walks' outcome on one line, e.g. "100 walks, 100
// live" or "7 walks, 6 live; suspect: not live after 500 steps: p: error".
func (r *WalkResult[S, A]) String() string {
	s := fmt.Sprintf("%s, %d live", plural(r.Walks, "walk"), r.Live)
	if r.Suspect != nil {
		s += "; suspect: " + r.Suspect.String()
	}
	return s
}

// String renders the verdict on one line, e.g. "C1: critical step 4 (n1
// timer go) after 9 probes", "C1: the start state is dead (3 probes)" or
// "C2: walks from the end of the path reach a live state; raise DMax (1
// probe)".
func (c *Critical[S, A]) String() string {
	switch {
	case c.Verdict == C1 && c.Step >= 0:
		return fmt.Sprintf("C1: critical step %d (%v) after %s", c.Step, c.Action, plural(c.Probes, "probe"))
	case c.Verdict == C1:
		return fmt.Sprintf("C1: the start state is dead (%s)", plural(c.Probes, "probe"))
	case c.Verdict == C2:
		return fmt.Sprintf("C2: walks from the end of the path reach a live state; raise DMax (%s)", plural(c.Probes, "probe"))
	}
	return fmt.Sprintf("%v at step %d (%s)", c.Verdict, c.Step, plural(c.Probes, "probe"))
}

// String returns the record's Text, the String of the action it was made
// from; for a record without Text, its kind, node, peer, timer and message
// type, e.g. "n2 deliver test.Note from n1".
func (r ActionRecord) String() string {
	if r.Text != "" {
		return r.Text
	}
	s := fmt.Sprintf("%v %s", r.Node, r.Kind)
	for _, part := range []string{r.Timer, r.Type} {
		if part != "" {
			s += " " + part
		}
	}
	switch {
	case r.Peer == 0:
	case r.Kind == "break":
		s += fmt.Sprintf(" %v", r.Peer)
	default:
		s += fmt.Sprintf(" from %v", r.Peer)
	}
	return s
}

// String renders the report on one line like Violation's String, e.g.
// `safety "disjoint" violated at depth 2: ... [path: n1 timer go; ...]`.
func (r ActorReport) String() string {
	steps := make([]string, len(r.Path))
	for i, a := range r.Path {
		steps[i] = a.String()
	}
	path := strings.Join(steps, "; ")
	if path == "" {
		path = "(empty path)"
	}
	return fmt.Sprintf("%s %q violated at depth %d: %s [path: %s]", r.Kind, r.Property, r.Depth, r.Error, path)
}

// plural renders n and the noun, with an s unless n is 1, n with thousands
// separators: "1 state", "1,204 states".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return thousands(uint64(max(n, 0))) + " " + noun + "s"
}

// thousands renders n with a comma every three digits.
func thousands(n uint64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
