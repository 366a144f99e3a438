package tool

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
)

// traceHeaderPrefix begins the first line of a trace 'emulate --trace'
// writes: the command line, as a JSON array, that 'trace show' re-runs
// (an emulation is a pure function of its flags) to show node states.
const traceHeaderPrefix = "# crystalball-emulate/1 "

// maxHeaderArgs bounds the arguments a trace header may hold.
const maxHeaderArgs = 256

// writeTraceHeader writes the header line of an emulation trace; none
// without a command line (a run not started by 'emulate').
func writeTraceHeader(w io.Writer, args []string) error {
	if args == nil {
		return nil
	}
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s%s\n", traceHeaderPrefix, b)
	return err
}

// parseTraceHeader decodes a header line's command line.
func parseTraceHeader(line string) ([]string, error) {
	var args []string
	if err := json.Unmarshal([]byte(strings.TrimPrefix(line, traceHeaderPrefix)), &args); err != nil || len(args) > maxHeaderArgs {
		return nil, fmt.Errorf("bad header (want %s[ARGS...], at most %d): %s", traceHeaderPrefix, maxHeaderArgs, quoteShort(line))
	}
	return args, nil
}

// rerunConfig rebuilds the emulation a trace's header names: the flags
// of 'emulate' parsed as it parses them, its outputs (trace, reports,
// profile) dropped.
func rerunConfig(cat *catalog, args []string) (emulation.Config, error) {
	fs := flag.NewFlagSet("emulate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	p := emulateParams{services: cat}
	p.registerCommand(fs) // the control run, the budget and --confirm change no line of the trace
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return emulation.Config{}, fmt.Errorf("the header's command line does not parse: %v", err)
	}
	if err := p.checkParsed(fs); err != nil {
		return emulation.Config{}, fmt.Errorf("the header's command line: %w", err)
	}
	svc, err := cat.lookup(p.service, SplitList(p.fix), p.nodes)
	if err != nil {
		return emulation.Config{}, fmt.Errorf("the header's command line: %w", err)
	}
	return p.emulationConfig(svc), nil
}

// lineCompare is the trace writer of a re-run: it counts the lines
// written and checks each against the file's, so a re-run that diverges
// (another build, another service) is caught at its first different line.
type lineCompare struct {
	want    []string
	n       int
	partial []byte
	err     error
}

func (l *lineCompare) Write(p []byte) (int, error) {
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		line := string(l.partial[:i])
		l.partial = l.partial[i+1:]
		l.compare(line)
	}
	return len(p), nil
}

// compare counts the re-run's next line and, until a first difference,
// checks it against the file's: a line past the file's end, or another
// than the file's, is the difference recorded in l.err.
func (l *lineCompare) compare(line string) {
	switch {
	case l.err != nil:
	case l.n >= len(l.want):
		l.err = fmt.Errorf("the re-run goes on past the trace's %d steps: the trace is of another build or service%s", len(l.want), rerunCauses)
	case line != l.want[l.n]:
		l.err = fmt.Errorf("the re-run diverges from the trace at step %d (the re-run wrote %s, the trace has %s): the trace is of another build or service%s", l.n+1, quoteN(line, 200), quoteN(l.want[l.n], 200), rerunCauses)
	}
	l.n++
}

// rerunView is the nodes' states in a re-run after a step.
type rerunView struct {
	step   int // the last step the re-run wrote (at least the one asked)
	fields map[node.ID][]string
	// history is the run's client history then (serve_history.go).
	history node.History
}

// rerun re-runs tl's emulation until it has written step n (1-based; 0:
// before the first event) and renders every node's state then.
func (tl *timeline) rerun(n int) (*rerunView, error) {
	if tl.rerunCfg == nil {
		return nil, fmt.Errorf("%s", noStates)
	}
	if v, ok := tl.rerunCache[n]; ok {
		return v, nil
	}
	em, step, err := tl.rerunUntil(n)
	if err != nil {
		return nil, err
	}
	v := &rerunView{step: step, fields: rerunNodeFields(em, tl.nodes), history: node.History{Events: slices.Clone(em.History().Events)}}
	if tl.rerunCache == nil || len(tl.rerunCache) >= 16 {
		tl.rerunCache = map[int]*rerunView{}
	}
	tl.rerunCache[n] = v
	return v, nil
}

// rerunUntil re-runs tl's emulation, checking its trace against the
// file's lines, until it has written step n; it returns the emulator
// and the last step written.
func (tl *timeline) rerunUntil(n int) (*emulation.Emulator, int, error) {
	cfg := *tl.rerunCfg
	lc := &lineCompare{want: tl.raw}
	cfg.Trace, cfg.TraceCauses = lc, true
	em, err := emulation.New(cfg)
	if err != nil {
		return nil, 0, fmt.Errorf("re-running the emulation: %w", err)
	}
	// Bounded: the file's lines (a diverging line stops it) and the run's
	// duration, past which the original wrote nothing.
	for stepRerun(em, lc, n, cfg.Duration) {
	}
	return em, lc.n, rerunOutcome(em, lc, n)
}

// stepRerun steps the re-run em once, unless it has written step n,
// diverged from the file (lc) or gone past the run's duration; it
// reports whether it stepped (and the emulation goes on).
func stepRerun(em *emulation.Emulator, lc *lineCompare, n int, duration time.Duration) bool {
	return lc.n < n && lc.err == nil && em.Elapsed() <= duration && em.Step()
}

// rerunOutcome is the error of a re-run that stopped: it diverged from
// the file, failed, or ended before step n.
func rerunOutcome(em *emulation.Emulator, lc *lineCompare, n int) error {
	if lc.err != nil {
		return lc.err
	}
	if err := em.Err(); err != nil {
		return fmt.Errorf("re-running the emulation: %w", err)
	}
	if lc.n < n {
		return fmt.Errorf("the re-run ended after step %d, before step %d", lc.n, n)
	}
	return nil
}

// rerunNodeFields renders the state of each of nodes in the re-run em,
// field by field: "live: false" for one down, else its service state and
// the messages in flight to it.
func rerunNodeFields(em *emulation.Emulator, nodes []node.ID) map[node.ID][]string {
	fields := map[node.ID][]string{}
	flight := em.InFlight()
	for _, id := range nodes {
		c := em.Core(id)
		if c == nil || !em.Live(id) {
			fields[id] = []string{"live: false"}
			continue
		}
		fields[id] = liveNodeFields(c, id, flight)
	}
	return fields
}

// liveNodeFields are the fields of live node id (core c): its service
// state, then the messages of flight addressed to it.
func liveNodeFields(c *node.Core, id node.ID, flight []node.Envelope) []string {
	f := append([]string{"live: true"}, stateFields(c.State())...)
	for _, e := range flight {
		if e.To == id {
			f = append(f, envelopeField(e))
		}
	}
	return f
}
