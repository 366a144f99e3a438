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
	limit := traceLimits.Bytes
	if limit <= 0 {
		limit = report.DefaultMaxBytes
	}
	sc := bufio.NewScanner(io.LimitReader(f, limit+1))
	sc.Buffer(make([]byte, 0, 64<<10), maxTraceLine)
	tl := &timeline{}
	seen := map[node.ID]bool{}
	var read int64
	for n := 1; sc.Scan(); n++ {
		read += int64(len(sc.Bytes())) + 1
		if read > limit+1 {
			return nil, usagef("%s: larger than %d bytes", file, limit)
		}
		if n == 1 && strings.HasPrefix(sc.Text(), traceHeaderPrefix) {
			args, err := parseTraceHeader(sc.Text())
			if err != nil {
				return nil, usagef("%s:1: %v", file, err)
			}
			cfg, err := rerunConfig(cat, args)
			if err != nil {
				return nil, usagef("%s:1: %v", file, err)
			}
			tl.rerunCfg = &cfg
			continue
		}
		st, err := parseTraceLine(sc.Text())
		if err != nil {
			return nil, usagef("%s:%d: %v", file, n, err)
		}
		if tl.rerunCfg != nil {
			tl.raw = append(tl.raw, sc.Text())
		}
		for _, id := range st.ids() {
			seen[id] = true
		}
		tl.steps = append(tl.steps, st)
	}
	if err := sc.Err(); err != nil {
		return nil, usagef("%s: %v", file, err)
	}
	for id := range seen {
		tl.nodes = append(tl.nodes, id)
	}
	slices.Sort(tl.nodes)
	causes := "; its lines carry no sends (a trace written without emulation.Config.TraceCauses): the event graph has timer edges only"
	for _, s := range tl.steps {
		if s.sends != nil || s.set != nil {
			causes = ""
			break
		}
	}
	states := "node states are not in the trace (only each step's state hash)"
	if tl.rerunCfg != nil {
		states = "node states by re-running the emulation its header names"
		if len(tl.nodes) < tl.rerunCfg.Nodes { // nodes that never stepped
			tl.nodes = tl.nodes[:0]
			for id := node.ID(1); id <= node.ID(tl.rerunCfg.Nodes); id++ {
				tl.nodes = append(tl.nodes, id)
			}
		}
	}
	tl.head = []string{fmt.Sprintf("emulation trace %s: %d events of %d nodes; %s%s", file, len(tl.steps), len(tl.nodes), states, causes)}
	return tl, nil
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
	if !traceClock.MatchString(line) {
		return tstep{}, fmt.Errorf("not a trace line (want CLOCK NODE EVENT): %s", quoteShort(line))
	}
	clock, rest, _ := strings.Cut(line, " ")
	who, desc, ok := strings.Cut(rest, " ")
	id, err := node.ParseID(who)
	if !ok || err != nil {
		return tstep{}, fmt.Errorf("no node in %s", quoteShort(line))
	}
	desc, effects, stepped := strings.Cut(desc, " -> ")
	st := tstep{node: id, text: clock + " " + who + " " + desc}
	words := strings.Fields(desc)
	if len(words) == 0 {
		return tstep{}, fmt.Errorf("no event in %s", quoteShort(line))
	}
	st.kind = words[0]
	switch {
	case (st.kind == "message" || st.kind == "datagram") && len(words) == 4 && words[2] == "from":
		st.msg = words[1]
		st.peer, err = node.ParseID(words[3])
	case st.kind == "drop" && len(words) >= 5 && words[3] == "from":
		st.msg = words[1] + " " + words[2] // "message T" or "datagram T"
		st.peer, err = node.ParseID(words[4])
	case (st.kind == "timer" || st.kind == "app") && len(words) == 2:
		st.msg = words[1]
	case st.kind == "transport-error" && len(words) == 2:
		st.peer, err = node.ParseID(words[1])
	}
	if err != nil {
		return tstep{}, fmt.Errorf("bad node in %s", quoteShort(line))
	}
	if stepped {
		if err := st.parseEffects(effects); err != nil {
			return tstep{}, fmt.Errorf("%v in %s", err, quoteShort(line))
		}
	}
	return st, nil
}

// parseEffects parses the part of a step's line after " -> ".
func (st *tstep) parseEffects(s string) error {
	for _, f := range strings.Fields(s) {
		key, val, _ := strings.Cut(f, "=")
		switch key {
		case "hash":
			st.hash = val
		case "sends":
			if _, err := strconv.Atoi(val); err != nil {
				return fmt.Errorf("bad sends %s", quoteShort(val))
			}
		case "to":
			st.sends = []traceSend{}
			for _, item := range strings.Split(val, ",") {
				i := strings.IndexAny(item, ":~")
				if i < 0 {
					return fmt.Errorf("bad send %s", quoteShort(item))
				}
				to, err := node.ParseID(item[:i])
				if err != nil {
					return fmt.Errorf("bad send %s", quoteShort(item))
				}
				st.sends = append(st.sends, traceSend{to: to, msg: item[i+1:], datagram: item[i] == '~'})
			}
		case "set":
			st.set = strings.Split(val, ",")
		}
	}
	return nil
}

// traceGraph builds the event graph of an emulation trace from the sends
// and timers its lines record: a delivery (or a drop) is matched to the
// first unmatched send of the same type on its channel, a timer to the
// latest step of its node that set it (a node's reset, leave or restart
// forgets its timers).
func traceGraph(tl *timeline) *eventGraph {
	g := &eventGraph{lost: map[int]int{}}
	type sendKey struct {
		from, to node.ID
		msg      string
		datagram bool
	}
	queues := map[sendKey][]int{}
	timers := map[timerKey]int{}
	for i := 1; i <= len(tl.steps); i++ {
		s := tl.steps[i-1]
		k := sendKey{from: s.peer, to: s.node, msg: s.msg, datagram: s.kind == "datagram"}
		if s.kind == "drop" {
			kind, msg, _ := strings.Cut(s.msg, " ")
			k.msg, k.datagram = msg, kind == "datagram"
		}
		if s.kind == "message" || s.kind == "datagram" || s.kind == "drop" {
			if q := queues[k]; len(q) > 0 {
				kind := "message"
				if k.datagram {
					kind = "datagram"
				}
				g.edges = append(g.edges, edge{From: q[0], To: i, Kind: kind, Label: k.msg, Dropped: s.kind == "drop"})
				queues[k] = q[1:]
			}
		}
		switch s.kind {
		case "timer":
			if from, ok := timers[timerKey{s.node, s.msg}]; ok {
				g.edges = append(g.edges, edge{From: from, To: i, Kind: "timer", Label: s.msg})
				delete(timers, timerKey{s.node, s.msg})
			}
		case "reset", "down", "up":
			for t := range timers {
				if t.node == s.node {
					delete(timers, t)
				}
			}
		}
		for _, t := range s.sends {
			k := sendKey{from: s.node, to: t.to, msg: t.msg, datagram: t.datagram}
			queues[k] = append(queues[k], i)
		}
		for _, name := range s.set {
			timers[timerKey{s.node, name}] = i
		}
	}
	return g
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
