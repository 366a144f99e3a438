package emulation

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// A fault schedule is a nemesis script: the faults of a run at the times
// they happen, one statement per line (or several, separated by ';'),
// '#' to the end of a line a comment:
//
//	at 30s partition {1,2} | {3}    # cut every link between the groups
//	at 90s heal                     # heal every cut
//	at 100s crash 2 for 60s         # crash-stop n2; it restarts 60s later
//	at 2m isolate 3 for 30s         # cut every link of n3, for 30s
//	at 3m cut 1->2                  # what n1 sends n2 is lost (one way)
//	at 3m30s cut 1-2                # n1 and n2 cut apart, both reach the rest
//	at 4m heal 1->2                 # heal that cut (heal 1-2, heal 3: n3's cuts)
//	at 5m crash 1                   # crash-stop n1 for good
//	at 6m restart 1                 # bring it back
//	at 7m jump 2 +10s               # n2's clock jumps 10s forward (-10s: back)
//
// Times are Go durations from the start of the run (Epoch); nodes are IDs
// (n2 or 2), within the run's nodes; in a partition, nodes in no group
// stay connected to every node. "for D" heals the partition, or restarts
// the crashed node, D later. Statements run in time order, those of one
// time in the order they are written. A statement whose node is not live
// when it comes (a crash of a node that is down, a restart of one that is
// up) is skipped, counted in NemesisStats.Skipped. ParseSchedule checks
// the form; New checks the nodes against Config.Nodes, and the errors of
// both name the line.

// ErrSchedule is wrapped by the errors of a fault schedule that cannot be
// run: its text (ParseSchedule) or its nodes (New).
var ErrSchedule = errors.New("emulation: bad fault schedule")

// Limits of a fault schedule: its size in bytes and its statements.
const (
	MaxScheduleBytes  = 1 << 20
	MaxScheduleFaults = 10_000
)

// ScheduleAction is what a schedule's statement does.
type ScheduleAction uint8

// The actions of a schedule.
const (
	ScheduleCrash ScheduleAction = iota + 1
	ScheduleRestart
	ScheduleIsolate
	SchedulePartition
	ScheduleCut
	ScheduleHeal
	ScheduleJump
)

var scheduleWords = [...]string{ScheduleCrash: "crash", ScheduleRestart: "restart", ScheduleIsolate: "isolate",
	SchedulePartition: "partition", ScheduleCut: "cut", ScheduleHeal: "heal", ScheduleJump: "jump"}

// Schedule is a parsed fault schedule.
type Schedule struct {
	// Faults are the statements, in time order (stable: one time's in
	// the order written).
	Faults []ScheduledFault
}

// ScheduledFault is one statement of a schedule.
type ScheduledFault struct {
	// Line is the statement's line in the text (from 1).
	Line int
	// At is when it happens, from Epoch.
	At     time.Duration
	Action ScheduleAction
	// Node is the node of a crash, restart, isolation or jump, the first
	// end of a cut or a heal of one link, or the node whose cuts a heal
	// heals (None: every cut); Peer the other end of a cut or a heal.
	Node, Peer node.ID
	// OneWay marks a cut (or its heal) of what Node sends Peer only.
	OneWay bool
	// Groups are a partition's groups.
	Groups [][]node.ID
	// For is how long a crashed node stays down or a partition lasts
	// (zero: for good); Jump a clock jump's size (negative: back).
	For, Jump time.Duration
}

// ParseSchedule parses a fault schedule (see the package documentation of
// the format above); its errors wrap ErrSchedule and name the line.
func ParseSchedule(text string) (*Schedule, error) {
	if len(text) > MaxScheduleBytes {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrSchedule, len(text), MaxScheduleBytes)
	}
	s := &Schedule{}
	for i, line := range strings.Split(text, "\n") {
		if c := strings.IndexByte(line, '#'); c >= 0 {
			line = line[:c]
		}
		for _, stmt := range strings.Split(line, ";") {
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			if len(s.Faults) == MaxScheduleFaults {
				return nil, fmt.Errorf("%w: line %d: more than %d statements", ErrSchedule, i+1, MaxScheduleFaults)
			}
			f, err := parseStatement(stmt)
			if err != nil {
				return nil, fmt.Errorf("%w: line %d: %v", ErrSchedule, i+1, err)
			}
			f.Line = i + 1
			s.Faults = append(s.Faults, f)
		}
	}
	sortFaults(s.Faults)
	return s, nil
}

// sortFaults sorts fs by time, stably (insertion sort: schedules are
// short, and mostly sorted already).
func sortFaults(fs []ScheduledFault) {
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && fs[j].At < fs[j-1].At; j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
}

// parseStatement parses "at DURATION ACTION ...".
func parseStatement(stmt string) (ScheduledFault, error) {
	r := strings.NewReplacer("{", " { ", "}", " } ", ",", " , ", "|", " | ")
	w := strings.Fields(r.Replace(stmt))
	var f ScheduledFault
	if len(w) < 3 || w[0] != "at" {
		return f, fmt.Errorf("%q is not \"at TIME ACTION ...\"", strings.TrimSpace(stmt))
	}
	at, err := parseSpan(w[1], "time")
	if err != nil {
		return f, err
	}
	f.At = at
	for a, word := range scheduleWords {
		if word == w[2] {
			f.Action = ScheduleAction(a)
		}
	}
	args := w[3:]
	if k := indexOf(args, "for"); k >= 0 {
		if f.Action != ScheduleCrash && f.Action != ScheduleIsolate && f.Action != SchedulePartition && f.Action != ScheduleCut {
			return f, fmt.Errorf("%s takes no \"for\"", w[2])
		}
		if k != len(args)-2 {
			return f, errors.New(`"for" takes one duration, at the end`)
		}
		if f.For, err = parseSpan(args[k+1], "duration"); err != nil {
			return f, err
		}
		if f.For == 0 {
			return f, errors.New(`"for" needs a positive duration`)
		}
		args = args[:k]
	}
	switch f.Action {
	case ScheduleCrash, ScheduleRestart, ScheduleIsolate:
		f.Node, err = oneNode(args)
	case ScheduleJump:
		if len(args) != 2 {
			return f, errors.New("jump takes a node and a signed duration (jump 2 +10s)")
		}
		if f.Node, err = parseNode(args[0]); err != nil {
			return f, err
		}
		if f.Jump, err = time.ParseDuration(args[1]); err != nil || f.Jump == 0 {
			return f, fmt.Errorf("%q is not a non-zero duration (+10s, -500ms)", args[1])
		}
	case SchedulePartition:
		f.Groups, err = parseGroups(args)
	case ScheduleCut:
		f.Node, f.Peer, f.OneWay, err = parseLink(strings.Join(args, ""))
	case ScheduleHeal:
		switch link := strings.Join(args, ""); {
		case link == "":
		case strings.Contains(link, "-"):
			f.Node, f.Peer, f.OneWay, err = parseLink(link)
		default:
			f.Node, err = parseNode(link)
		}
	default:
		return f, fmt.Errorf("unknown action %q (want crash, restart, isolate, partition, cut, heal or jump)", w[2])
	}
	return f, err
}

func indexOf(ws []string, s string) int {
	for i, w := range ws {
		if w == s {
			return i
		}
	}
	return -1
}

// parseSpan parses a non-negative duration.
func parseSpan(s, what string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a %s (a non-negative Go duration: 30s, 2m, 1h30m)", s, what)
	}
	return d, nil
}

// parseNode parses a node ID: "2" or "n2".
func parseNode(s string) (node.ID, error) {
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "n"), 10, 64)
	if err != nil || v == 0 || v > MaxNodes {
		return node.None, fmt.Errorf("%q is not a node (1..%d)", s, MaxNodes)
	}
	return node.ID(v), nil
}

func oneNode(args []string) (node.ID, error) {
	if len(args) != 1 {
		return node.None, fmt.Errorf("want one node, got %d words", len(args))
	}
	return parseNode(args[0])
}

// parseLink parses "A->B" (one way) or "A-B" / "A<->B" (both ways).
func parseLink(s string) (a, b node.ID, oneWay bool, err error) {
	sep := "-"
	switch {
	case strings.Contains(s, "<->"):
		sep = "<->"
	case strings.Contains(s, "->"):
		sep, oneWay = "->", true
	}
	x, y, ok := strings.Cut(s, sep)
	if !ok {
		return 0, 0, false, fmt.Errorf("%q is not a link (1->2 one way, 1-2 both ways)", s)
	}
	if a, err = parseNode(x); err != nil {
		return 0, 0, false, err
	}
	if b, err = parseNode(y); err != nil {
		return 0, 0, false, err
	}
	if a == b {
		return 0, 0, false, fmt.Errorf("%q links a node to itself", s)
	}
	return a, b, oneWay, nil
}

// parseGroups parses "{ 1 , 2 } | { 3 }" (already split into words).
func parseGroups(args []string) ([][]node.ID, error) {
	var groups [][]node.ID
	seen := map[node.ID]bool{}
	for len(args) > 0 {
		if len(groups) > 0 {
			if args[0] != "|" {
				return nil, fmt.Errorf("want | between groups, got %q", args[0])
			}
			args = args[1:]
		}
		if len(args) == 0 || args[0] != "{" {
			return nil, errors.New("want a group: {1,2}")
		}
		end := indexOf(args, "}")
		if end < 0 {
			return nil, errors.New("a group has no closing }")
		}
		var g []node.ID
		for k, w := range args[1:end] {
			if k%2 == 1 {
				if w != "," {
					return nil, fmt.Errorf("want , between a group's nodes, got %q", w)
				}
				continue
			}
			id, err := parseNode(w)
			if err != nil {
				return nil, err
			}
			if seen[id] {
				return nil, fmt.Errorf("%v is in two groups", id)
			}
			seen[id] = true
			g = append(g, id)
		}
		if len(g) == 0 || (end-1)%2 == 0 {
			return nil, errors.New("a group needs nodes, separated by commas")
		}
		groups = append(groups, g)
		args = args[end+1:]
	}
	if len(groups) < 2 {
		return nil, errors.New("a partition needs two groups or more: {1,2} | {3}")
	}
	return groups, nil
}

// Check reports a node of s outside 1..nodes, naming its line (New checks
// Config.Nemesis.Schedule so).
func (s *Schedule) Check(nodes int) error {
	for _, f := range s.Faults {
		ids := []node.ID{f.Node, f.Peer}
		for _, g := range f.Groups {
			ids = append(ids, g...)
		}
		for _, id := range ids {
			if uint64(id) > uint64(nodes) {
				return fmt.Errorf("%w: line %d: no node %v (the run has %d)", ErrSchedule, f.Line, id, nodes)
			}
		}
		if f.Action == 0 || int(f.Action) >= len(scheduleWords) {
			return fmt.Errorf("%w: line %d: unknown action %d", ErrSchedule, f.Line, f.Action)
		}
	}
	return nil
}

// String renders the schedule in its canonical form, one statement a line.
func (s *Schedule) String() string {
	var b strings.Builder
	for _, f := range s.Faults {
		b.WriteString(f.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// String renders the statement: "at 30s partition {1,2} | {3} for 1m0s".
func (f ScheduledFault) String() string {
	word := "action(?)"
	if int(f.Action) < len(scheduleWords) && f.Action > 0 {
		word = scheduleWords[f.Action]
	}
	s := fmt.Sprintf("at %v %s", f.At, word)
	link := func() string {
		sep := "-"
		if f.OneWay {
			sep = "->"
		}
		return fmt.Sprintf(" %d%s%d", f.Node, sep, f.Peer)
	}
	switch f.Action {
	case ScheduleCrash, ScheduleRestart, ScheduleIsolate:
		s += fmt.Sprintf(" %d", f.Node)
	case ScheduleJump:
		s += fmt.Sprintf(" %d %s", f.Node, signed(f.Jump))
	case SchedulePartition:
		var gs []string
		for _, g := range f.Groups {
			var ids []string
			for _, id := range g {
				ids = append(ids, strconv.FormatUint(uint64(id), 10))
			}
			gs = append(gs, "{"+strings.Join(ids, ",")+"}")
		}
		s += " " + strings.Join(gs, " | ")
	case ScheduleCut:
		s += link()
	case ScheduleHeal:
		switch {
		case f.Peer != node.None:
			s += link()
		case f.Node != node.None:
			s += fmt.Sprintf(" %d", f.Node)
		}
	}
	if f.For > 0 {
		s += " for " + f.For.String()
	}
	return s
}

func signed(d time.Duration) string {
	if d < 0 {
		return d.String()
	}
	return "+" + d.String()
}

// runScheduled carries out statement f now and reports whether it was an
// event (a statement whose node is not live is skipped).
func (e *Emulator) runScheduled(f ScheduledFault) bool {
	nm := e.nemesisState()
	skip := func(why string) bool {
		nm.st.Skipped++
		if e.cfg.Trace != nil {
			e.traceLabel(f.Node, fmt.Sprintf("nemesis line %d skipped: %s", f.Line, why))
		}
		return false
	}
	var err error
	switch f.Action {
	case ScheduleCrash:
		if !e.Live(f.Node) {
			return skip("not live")
		}
		e.nemesisCrash(f.Node, f.For)
	case ScheduleRestart:
		n := e.node(f.Node)
		if n.live || !n.started {
			return skip("not down")
		}
		nm.st.Restarts++
		err = e.Up(f.Node)
	case ScheduleJump:
		e.nemesisJump(f.Node, f.Jump)
	case ScheduleHeal:
		e.healScheduled(f)
		nm.st.Heals++
	default:
		links, kind := e.scheduledLinks(f)
		var cut []cutLink
		cut, err = e.cutLinks(links)
		e.partitionRecord(cut, kind, f.For)
	}
	if err != nil && err != e.err {
		panic(fmt.Sprintf("emulation: schedule line %d (%v): %v", f.Line, f, err))
	}
	return true
}

// scheduledLinks returns the links a partition statement cuts, and its
// shape as the explorer names it.
func (e *Emulator) scheduledLinks(f ScheduledFault) ([]cutLink, consequence.CutKinds) {
	switch f.Action {
	case ScheduleIsolate:
		var out []cutLink
		for b := node.ID(1); b <= node.ID(e.cfg.Nodes); b++ {
			if b != f.Node {
				out = append(out, cutLink{a: min(f.Node, b), b: max(f.Node, b)})
			}
		}
		return out, consequence.CutIsolate
	case ScheduleCut:
		if f.OneWay {
			return []cutLink{{a: f.Node, b: f.Peer, oneWay: true}}, consequence.CutOneWay
		}
		return []cutLink{{a: min(f.Node, f.Peer), b: max(f.Node, f.Peer)}}, consequence.CutPartial
	}
	links, _ := e.groupLinks(f.Groups) // checked by New
	kind := consequence.CutSplit
	named := 0
	for _, g := range f.Groups {
		named += len(g)
	}
	switch {
	case len(f.Groups) == 2 && named == e.cfg.Nodes && (len(f.Groups[0]) == 1 || len(f.Groups[1]) == 1):
		kind = consequence.CutIsolate
	case len(links) == 1:
		kind = consequence.CutPartial
	}
	return links, kind
}

// healScheduled carries out a heal statement: every cut, node f.Node's
// cuts, or one link.
func (e *Emulator) healScheduled(f ScheduledFault) {
	switch {
	case f.Peer != node.None && f.OneWay:
		_ = e.HealOneWay(f.Node, f.Peer)
	case f.Peer != node.None:
		_ = e.Heal(f.Node, f.Peer)
	case f.Node != node.None:
		_ = e.Reconnect(f.Node)
		for _, k := range slices.SortedFunc(maps.Keys(e.faults.oneway), cmpPairs) {
			if k[0] == f.Node || k[1] == f.Node {
				_ = e.HealOneWay(k[0], k[1])
			}
		}
	default:
		_ = e.HealAll()
		nm := e.nemesisState()
		clear(nm.heals)
		nm.partIn = -1
	}
}
