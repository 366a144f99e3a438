package tool

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/report"
)

// maxTraceLine bounds one line of an emulation trace (a step's line with
// its sends stays far below it).
const maxTraceLine = 1 << 20

// traceClock matches the clock that begins every emulation trace line.
var traceClock = regexp.MustCompile(`^[0-9]{2,}:[0-9]{2}:[0-9]{2}\.[0-9]{9} `)

// isEmulationTrace reports whether file begins like an emulation trace
// (emulation/doc.go, "Trace"); anything else is read as a JSON report.
func isEmulationTrace(file string) bool {
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [32]byte
	n, _ := io.ReadFull(f, b[:])
	return traceClock.Match(b[:n]) || bytes.HasPrefix(b[:n], []byte(traceHeaderPrefix))
}

// readEmulationTrace reads an emulation trace (within traceLimits' byte
// bound) as a timeline of events without states.
func readEmulationTrace(cat *catalog, file string) (*timeline, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, usagef("%v", err)
	}
	defer f.Close()
	tl, seen, err := scanEmulationTrace(cat, file, f)
	if err != nil {
		return nil, err
	}
	for id := range seen {
		tl.nodes = append(tl.nodes, id)
	}
	slices.Sort(tl.nodes)
	states := tl.statesNote()
	tl.head = []string{fmt.Sprintf("emulation trace %s: %d events of %d nodes; %s%s", file, len(tl.steps), len(tl.nodes), states, causesNote(tl.steps))}
	return tl, nil
}

// traceByteLimit is the byte bound of an emulation trace: traceLimits',
// or report's default.
func traceByteLimit() int64 {
	if traceLimits.Bytes <= 0 {
		return report.DefaultMaxBytes
	}
	return traceLimits.Bytes
}

// scanEmulationTrace reads the lines of file (r) into a timeline, and
// the nodes they name; a file over the byte bound is a usage error.
func scanEmulationTrace(cat *catalog, file string, r io.Reader) (*timeline, map[node.ID]bool, error) {
	limit := traceByteLimit()
	sc := bufio.NewScanner(io.LimitReader(r, limit+1))
	sc.Buffer(make([]byte, 0, 64<<10), maxTraceLine)
	tl := &timeline{}
	seen := map[node.ID]bool{}
	var read int64
	for n := 1; sc.Scan(); n++ {
		read += int64(len(sc.Bytes())) + 1
		if read > limit+1 {
			return nil, nil, usagef("%s: larger than %d bytes", file, limit)
		}
		if err := tl.readTraceLine(cat, file, n, sc.Text(), seen); err != nil {
			return nil, nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, usagef("%s: %v", file, err)
	}
	return tl, seen, nil
}

// readTraceLine adds line n of file to tl: the header (the first line,
// if it is one) or a step, whose nodes it records in seen.
func (tl *timeline) readTraceLine(cat *catalog, file string, n int, line string, seen map[node.ID]bool) error {
	if n == 1 && strings.HasPrefix(line, traceHeaderPrefix) {
		return tl.readTraceHeader(cat, file, line)
	}
	st, err := parseTraceLine(line)
	if err != nil {
		return usagef("%s:%d: %v", file, n, err)
	}
	if tl.rerunCfg != nil {
		tl.raw = append(tl.raw, line)
	}
	for _, id := range st.ids() {
		seen[id] = true
	}
	tl.steps = append(tl.steps, st)
	return nil
}

// readTraceHeader sets tl's re-run configuration from the trace's header
// line (the emulate command line that wrote it).
func (tl *timeline) readTraceHeader(cat *catalog, file, line string) error {
	args, err := parseTraceHeader(line)
	if err != nil {
		return usagef("%s:1: %v", file, err)
	}
	cfg, err := rerunConfig(cat, args)
	if err != nil {
		return usagef("%s:1: %v", file, err)
	}
	tl.rerunCfg = &cfg
	return nil
}

// causesNote is the header's note on a trace whose lines carry no sends
// (nothing when some do).
func causesNote(steps []tstep) string {
	for _, s := range steps {
		if s.sends != nil || s.set != nil {
			return ""
		}
	}
	return "; its lines carry no sends (a trace written without emulation.Config.TraceCauses): the event graph has timer edges only"
}

// statesNote is the header's note on where the node states come from;
// with a re-run, the nodes become every node of the emulation (those that
// never stepped too).
func (tl *timeline) statesNote() string {
	if tl.rerunCfg == nil {
		return "node states are not in the trace (only each step's state hash)"
	}
	if len(tl.nodes) < tl.rerunCfg.Nodes { // nodes that never stepped
		tl.nodes = tl.nodes[:0]
		for id := node.ID(1); id <= node.ID(tl.rerunCfg.Nodes); id++ {
			tl.nodes = append(tl.nodes, id)
		}
	}
	return "node states by re-running the emulation its header names"
}

// ids are the nodes a trace line names.
func (s tstep) ids() []node.ID {
	out := []node.ID{s.node}
	if s.peer != node.None {
		out = append(out, s.peer)
	}
	for _, t := range s.sends {
		out = append(out, t.to)
	}
	return out
}

// parseTraceLine parses one line of an emulation trace: "CLOCK NODE
// EVENT [-> hash=H sends=N [to=...] [set=...]]".
func parseTraceLine(line string) (tstep, error) {
	st, effects, stepped, err := parseTraceEvent(line)
	if err != nil {
		return tstep{}, err
	}
	if stepped {
		if err := st.parseEffects(effects); err != nil {
			return tstep{}, fmt.Errorf("%v in %s", err, quoteShort(line))
		}
	}
	return st, nil
}

// parseTraceEvent parses a trace line up to its effects: the clock, the
// node and the event; it returns the effects' text and whether the line
// has them (the node stepped).
func parseTraceEvent(line string) (st tstep, effects string, stepped bool, err error) {
	if !traceClock.MatchString(line) {
		return tstep{}, "", false, fmt.Errorf("not a trace line (want CLOCK NODE EVENT): %s", quoteShort(line))
	}
	clock, rest, _ := strings.Cut(line, " ")
	who, desc, ok := strings.Cut(rest, " ")
	id, err := node.ParseID(who)
	if !ok || err != nil {
		return tstep{}, "", false, fmt.Errorf("no node in %s", quoteShort(line))
	}
	desc, effects, stepped = strings.Cut(desc, " -> ")
	st = tstep{node: id, text: clock + " " + who + " " + desc}
	if err := st.parseEventWords(strings.Fields(desc), line); err != nil {
		return tstep{}, "", false, err
	}
	return st, effects, stepped, nil
}

// traceEventParsers parse the words of an event after its kind, by kind:
// the message type or timer name and the peer. An event of another kind,
// or of another shape, has neither.
var traceEventParsers = map[string]func(st *tstep, words []string) error{
	"message":         parseDeliveryWords,
	"datagram":        parseDeliveryWords,
	"drop":            parseDropWords,
	"timer":           parseNameWords,
	"app":             parseNameWords,
	"transport-error": parsePeerWords,
}

// parseEventWords sets st's kind, message and peer from the event's
// words; line is quoted in the error.
func (st *tstep) parseEventWords(words []string, line string) error {
	if len(words) == 0 {
		return fmt.Errorf("no event in %s", quoteShort(line))
	}
	st.kind = words[0]
	if parse, ok := traceEventParsers[st.kind]; ok && parse(st, words) != nil {
		return fmt.Errorf("bad node in %s", quoteShort(line))
	}
	return nil
}

// parseDeliveryWords parses "message|datagram T from NODE".
func parseDeliveryWords(st *tstep, words []string) error {
	if len(words) != 4 || words[2] != "from" {
		return nil
	}
	var err error
	st.msg = words[1]
	st.peer, err = node.ParseID(words[3])
	return err
}

// parseDropWords parses "drop message|datagram T from NODE ...".
func parseDropWords(st *tstep, words []string) error {
	if len(words) < 5 || words[3] != "from" {
		return nil
	}
	var err error
	st.msg = words[1] + " " + words[2] // "message T" or "datagram T"
	st.peer, err = node.ParseID(words[4])
	return err
}

// parseNameWords parses "timer|app NAME".
func parseNameWords(st *tstep, words []string) error {
	if len(words) == 2 {
		st.msg = words[1]
	}
	return nil
}

// parsePeerWords parses "transport-error NODE".
func parsePeerWords(st *tstep, words []string) error {
	if len(words) != 2 {
		return nil
	}
	var err error
	st.peer, err = node.ParseID(words[1])
	return err
}

// traceEffectParsers parse the KEY=VALUE effects of a step's line, by
// key; an effect of another key is ignored.
var traceEffectParsers = map[string]func(st *tstep, val string) error{
	"hash":  parseHashEffect,
	"sends": parseSendsEffect,
	"to":    parseToEffect,
	"set":   parseSetEffect,
}

// parseHashEffect reads hash=H: the node's state hash after the step.
func parseHashEffect(st *tstep, val string) error {
	st.hash = val
	return nil
}

// parseSendsEffect checks sends=N, the count of the step's sends.
func parseSendsEffect(_ *tstep, val string) error {
	if _, err := strconv.Atoi(val); err != nil {
		return fmt.Errorf("bad sends %s", quoteShort(val))
	}
	return nil
}

// parseToEffect reads to=..., the messages the step sent.
func parseToEffect(st *tstep, val string) error {
	sends, err := parseTraceSends(val)
	st.sends = sends
	return err
}

// parseSetEffect reads set=..., the timers the step set.
func parseSetEffect(st *tstep, val string) error {
	st.set = strings.Split(val, ",")
	return nil
}

// parseEffects parses the part of a step's line after " -> ".
func (st *tstep) parseEffects(s string) error {
	for _, f := range strings.Fields(s) {
		key, val, _ := strings.Cut(f, "=")
		if parse, ok := traceEffectParsers[key]; ok {
			if err := parse(st, val); err != nil {
				return err
			}
		}
	}
	return nil
}

// parseTraceSends parses a step's "to=" list: NODE:TYPE for a message,
// NODE~TYPE for a datagram.
func parseTraceSends(val string) ([]traceSend, error) {
	sends := []traceSend{}
	for _, item := range strings.Split(val, ",") {
		i := strings.IndexAny(item, ":~")
		if i < 0 {
			return nil, fmt.Errorf("bad send %s", quoteShort(item))
		}
		to, err := node.ParseID(item[:i])
		if err != nil {
			return nil, fmt.Errorf("bad send %s", quoteShort(item))
		}
		sends = append(sends, traceSend{to: to, msg: item[i+1:], datagram: item[i] == '~'})
	}
	return sends, nil
}

// traceSendKey is a channel of an emulation trace and a message type on
// it: what a delivery is matched to a send by.
type traceSendKey struct {
	from, to node.ID
	msg      string
	datagram bool
}

// traceGraphBuilder holds what traceGraph tracks between steps: the
// unmatched sends per channel and type (in order), the step that last
// set each timer.
type traceGraphBuilder struct {
	g      *eventGraph
	queues map[traceSendKey][]int
	timers map[timerKey]int
}

// traceGraph builds the event graph of an emulation trace from the sends
// and timers its lines record: a delivery (or a drop) is matched to the
// first unmatched send of the same type on its channel, a timer to the
// latest step of its node that set it (a node's reset, leave or restart
// forgets its timers).
func traceGraph(tl *timeline) *eventGraph {
	b := &traceGraphBuilder{g: &eventGraph{lost: map[int]int{}}, queues: map[traceSendKey][]int{}, timers: map[timerKey]int{}}
	for i := 1; i <= len(tl.steps); i++ {
		s := tl.steps[i-1]
		b.matchDelivery(i, s)
		b.matchTimer(i, s)
		b.recordEffects(i, s)
	}
	return b.g
}

// channelEventKinds are the trace events that take a message off a
// channel: a delivery or a drop.
var channelEventKinds = map[string]bool{"message": true, "datagram": true, "drop": true}

// traceDeliveryKey is the channel and message type of a delivery or drop.
func traceDeliveryKey(s tstep) traceSendKey {
	k := traceSendKey{from: s.peer, to: s.node, msg: s.msg, datagram: s.kind == "datagram"}
	if s.kind == "drop" {
		kind, msg, _ := strings.Cut(s.msg, " ")
		k.msg, k.datagram = msg, kind == "datagram"
	}
	return k
}

// traceSendKind is an edge's kind for a send: "datagram" or "message".
func traceSendKind(datagram bool) string {
	if datagram {
		return "datagram"
	}
	return "message"
}

// matchDelivery adds the edge from the send step i (s) delivers or drops,
// the first unmatched one of its type on its channel, if any.
func (b *traceGraphBuilder) matchDelivery(i int, s tstep) {
	if !channelEventKinds[s.kind] {
		return
	}
	k := traceDeliveryKey(s)
	q := b.queues[k]
	if len(q) == 0 {
		return
	}
	b.g.edges = append(b.g.edges, edge{From: q[0], To: i, Kind: traceSendKind(k.datagram), Label: k.msg, Dropped: s.kind == "drop"})
	b.queues[k] = q[1:]
}

// matchTimer adds the edge from the step that set the timer step i (s)
// fires; a reset, leave or restart forgets its node's timers.
func (b *traceGraphBuilder) matchTimer(i int, s tstep) {
	switch s.kind {
	case "timer":
		b.fireTimer(i, s)
	case "reset", "down", "up":
		b.forgetTimers(s.node)
	}
}

// fireTimer adds the edge of timer step i (s) from the step that set it,
// and forgets the setting.
func (b *traceGraphBuilder) fireTimer(i int, s tstep) {
	k := timerKey{s.node, s.msg}
	if from, ok := b.timers[k]; ok {
		b.g.edges = append(b.g.edges, edge{From: from, To: i, Kind: "timer", Label: s.msg})
		delete(b.timers, k)
	}
}

// forgetTimers forgets the timers node id set.
func (b *traceGraphBuilder) forgetTimers(id node.ID) {
	for t := range b.timers {
		if t.node == id {
			delete(b.timers, t)
		}
	}
}

// recordEffects records the sends and timer settings of step i (s).
func (b *traceGraphBuilder) recordEffects(i int, s tstep) {
	for _, t := range s.sends {
		k := traceSendKey{from: s.node, to: t.to, msg: t.msg, datagram: t.datagram}
		b.queues[k] = append(b.queues[k], i)
	}
	for _, name := range s.set {
		b.timers[timerKey{s.node, name}] = i
	}
}

// hashAt returns id's state hash after step n of an emulation trace (its
// latest step at or before n), and that step; 0 when it has none yet.
func (tl *timeline) hashAt(id node.ID, n int) (string, int) {
	for i := n; i >= 1; i-- {
		if s := tl.steps[i-1]; s.node == id && s.hash != "" {
			return s.hash, i
		}
	}
	return "", 0
}
