package main

import (
	"errors"
	"sync"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
)

// timing measures each handled event of one node: a layer placed first
// notes when the event reaches the node's layers (Before), one placed
// last takes the latency when the core has stepped it (After), so what
// it times is every layer's Before — the steering gate's immediate check
// among them — and the service's handler. Events a layer drops (snapshot
// markers, vetoed events) are not timed. Both run on the node's core
// goroutine; take is called from another.
type timing struct {
	mu    sync.Mutex
	start time.Time // of the event being stepped (zero: none)
	lat   []time.Duration
	n     uint64
}

// first returns the layer that starts the clock.
func (t *timing) first() layer.Layer { return &timingLayer{t: t, first: true} }

// last returns the layer that stops it.
func (t *timing) last() layer.Layer { return &timingLayer{t: t} }

// count returns how many events were timed so far.
func (t *timing) count() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// take returns the latencies timed since the last take and forgets them.
func (t *timing) take() []time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.lat
	t.lat = nil
	return out
}

// timingLayer is one end of a timing.
type timingLayer struct {
	t        *timing
	first    bool
	attached bool
}

var errAttached = errors.New("livecost: timing layer attached twice")

// The layer.Layer methods: only Before (first) and After (last) act.

func (l *timingLayer) Messages() []node.Message { return nil }

func (l *timingLayer) Attach(layer.Host) error {
	if l.attached {
		return errAttached
	}
	l.attached = true
	return nil
}

func (l *timingLayer) Start(time.Time) []node.Envelope { return nil }

func (l *timingLayer) Before(time.Time, node.Event, *node.Envelope) (bool, []node.Envelope, error) {
	if l.first {
		l.t.mu.Lock()
		l.t.start = time.Now()
		l.t.mu.Unlock()
	}
	return true, nil, nil
}

func (l *timingLayer) Sending(time.Time, *node.Envelope) {}

func (l *timingLayer) After(time.Time) []node.Envelope {
	if l.first {
		return nil
	}
	end := time.Now()
	l.t.mu.Lock()
	if !l.t.start.IsZero() {
		l.t.lat = append(l.t.lat, end.Sub(l.t.start))
		l.t.n++
		l.t.start = time.Time{}
	}
	l.t.mu.Unlock()
	return nil
}

func (l *timingLayer) Tick(time.Time) ([]node.Envelope, error) { return nil, nil }

func (l *timingLayer) NextTick() time.Time { return time.Time{} }
