package tool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/statediff"
)

// ErrNotDeterministic is wrapped by the error of 'emulate
// --check-determinism' when the two runs of one seed differ.
var ErrNotDeterministic = errors.New("the service is not deterministic")

// determinismTwin is --check-determinism: a second emulator of the same
// configuration, run in step with the first (a slice of virtual time
// each, runWithStatus's after hook), whose trace lines — every event with
// the state hashes it left, the messages it sent and the timers it set —
// must be the first run's, line for line. Only a slice's lines are held.
type determinismTwin struct {
	em    *emulation.Emulator
	lines traceTwin
	seed  uint64
	// first is the first run's emulator (set once it is built), whose
	// node the divergence names is compared field by field with the
	// second's.
	first *emulation.Emulator
}

// newDeterminismTwin builds the second run of cfg and returns it with the
// writer the first run's trace must also go to.
func newDeterminismTwin(cfg emulation.Config) (*determinismTwin, io.Writer, error) {
	d := &determinismTwin{seed: cfg.Seed}
	cfg.Trace, cfg.TraceCauses = secondRun{&d.lines}, true
	cfg.OnViolation, cfg.OnStep, cfg.OnNetwork = nil, nil, nil
	if cfg.Snapshots != nil {
		s := *cfg.Snapshots
		s.OnSnapshot, s.OnCheckpoint, s.OnFailure = nil, nil, nil
		cfg.Snapshots = &s
	}
	if cfg.Steering != nil {
		s := *cfg.Steering
		s.OnRound, s.OnIntervention = nil, nil
		cfg.Steering = &s
	}
	em, err := emulation.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	d.em = em
	return d, firstRun{&d.lines}, nil
}

// after runs the second emulator to t (the end: to its end) and reports
// the first line where the runs differ.
func (d *determinismTwin) after(ctx context.Context, t, total time.Duration) error {
	var err error
	if t >= total {
		_, err = d.em.Run(ctx)
	} else {
		err = d.em.RunUntilContext(ctx, emulation.Epoch.Add(t))
	}
	if d.lines.diverged == "" && t >= total && len(d.lines.queue) > 0 {
		d.lines.diverged = fmt.Sprintf("after event %d the first run went on (%s) and the second did not", d.lines.n, quoteN(d.lines.queue[0], 300))
	}
	if d.lines.diverged != "" {
		return fmt.Errorf("%w: two runs of seed %d in this process differ: %s%s (a handler may read only its state, the event and Env: not the wall clock, a map's iteration order or a global variable; nodetest.Conformance names the field)",
			ErrNotDeterministic, d.seed, d.lines.diverged, d.fieldNow(t))
	}
	if err != nil {
		return fmt.Errorf("the second run: %w", err)
	}
	return nil
}

// traceTwin compares the two runs' trace lines: the first run's queue
// up, the second's are checked against them.
type traceTwin struct {
	queue         []string
	first, second []byte // partial lines
	n             int    // lines compared
	diverged      string
	node          node.ID // the node of the first differing line (None: unknown)
}

type firstRun struct{ t *traceTwin }

func (w firstRun) Write(p []byte) (int, error) {
	w.t.first = append(w.t.first, p...)
	for {
		i := bytes.IndexByte(w.t.first, '\n')
		if i < 0 {
			return len(p), nil
		}
		if w.t.diverged == "" {
			w.t.queue = append(w.t.queue, string(w.t.first[:i]))
		}
		w.t.first = w.t.first[i+1:]
	}
}

type secondRun struct{ t *traceTwin }

func (w secondRun) Write(p []byte) (int, error) {
	t := w.t
	t.second = append(t.second, p...)
	for {
		i := bytes.IndexByte(t.second, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(t.second[:i])
		t.second = t.second[i+1:]
		if t.diverged != "" {
			continue
		}
		t.n++
		switch {
		case len(t.queue) == 0:
			t.diverged = fmt.Sprintf("at event %d the second run went on (%s) and the first did not", t.n, quoteN(line, 300))
		case t.queue[0] != line:
			t.diverged = fmt.Sprintf("at event %d, first run: %s; second run: %s", t.n, quoteN(t.queue[0], 300), quoteN(line, 300))
			t.node = lineNode(line)
		default:
			t.queue = t.queue[1:]
		}
	}
}

// determinismHook sets up --check-determinism for the run of cfg (the
// first): the second run, and the hook runWithStatus calls after each
// slice (nil without the flag).
func (p *emulateParams) determinismHook(ctx context.Context, cfg *emulation.Config) (func(time.Duration) error, error) {
	if !p.checkDeterminism {
		return nil, nil
	}
	twin, first, err := newDeterminismTwin(*cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Trace != nil {
		cfg.Trace = io.MultiWriter(cfg.Trace, first)
	} else {
		cfg.Trace = first
	}
	cfg.TraceCauses = true
	p.twin = twin
	return func(t time.Duration) error { return twin.after(ctx, t, p.duration) }, nil
}

// fieldNow compares, at virtual time t (the end of the slice the runs
// diverged in), the two runs' states of the node the first differing
// line names: the first field that differs, if the states still do.
func (d *determinismTwin) fieldNow(t time.Duration) string {
	if d.first == nil || d.lines.node == node.None {
		return ""
	}
	a, b := d.first.Core(d.lines.node), d.em.Core(d.lines.node)
	if a == nil || b == nil || a.Service() == nil || b.Service() == nil {
		return ""
	}
	if diff, ok := statediff.First(a.Service(), b.Service()); ok {
		return fmt.Sprintf("; at %v %v's states differ at %s", t, d.lines.node, diff)
	}
	return ""
}

// lineNode is the node a trace line names second ("00:00:09.741 n2
// message …"); None when it names none.
func lineNode(line string) node.ID {
	f := strings.Fields(line)
	if len(f) < 2 {
		return node.None
	}
	id, err := node.ParseID(f[1])
	if err != nil {
		return node.None
	}
	return id
}
