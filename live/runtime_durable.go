package live

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"

	"go.uber.org/zap"
)

// Write-ahead. A step's durable records (layer.Outcome.Durable) reach the
// store, synced, before anything the step sent leaves the node: a Paxos
// acceptor's promise is on disk before the Promise message is queued on the
// connection (etcd raft's Ready discipline). The runtime batches the syncs
// (group commit): once a step has records to write, that step's sends and
// every later one are held, in order, with the records of the steps that
// follow, and one store Write (one sync) commits them all, then the held
// sends go out in their order. The batch is committed as soon as the core
// goroutine has no inbound message or application call waiting, or after
// maxDurableBatch steps, and at once before anything that cannot wait: a
// connection a verdict breaks (Outcome.Break) and a TrySend (its refusal
// must be the node's next event). Messages to the node itself are not held
// (they do not leave it), and neither are timers. A step without records
// whose sends find nothing held sends them at once.

// maxDurableBatch bounds the steps whose sends wait for one sync.
const maxDurableBatch = 64

// ErrDurableRequired is returned by NewRuntime for a node.Durable service
// with neither RuntimeConfig.Durability.DataDir nor Durability.Ephemeral.
var ErrDurableRequired = errors.New("live: the service keeps durable state (node.Durable) and no data directory was given")

// ErrStoreFailed is wrapped by Runtime.Err after a store write failed: the
// node stopped rather than act on promises it could not record.
var ErrStoreFailed = errors.New("live: store write failed; the node stopped")

// writeAhead is the runtime's write-ahead state, owned by the core
// goroutine (its store and its recovered records are set by Start).
type writeAhead struct {
	store Store
	// rec is what Start loaded, for the pipeline's Restart.
	rec node.Recovered
	// pending are the records not yet committed, at most one per key in
	// the order first written; held the peer sends waiting for them.
	pending []node.DurableWrite
	held    []layer.Send
	// steps counts the steps carried out since pending became non-empty.
	steps int
}

// holding reports whether sends must wait for a commit.
func (w *writeAhead) holding() bool { return len(w.pending) > 0 || len(w.held) > 0 }

// stage adds a step's records to the batch (a later value of a key
// replaces an earlier one).
func (w *writeAhead) stage(ws []node.DurableWrite) {
	for _, d := range ws {
		if i := slices.IndexFunc(w.pending, func(p node.DurableWrite) bool { return p.Key == d.Key }); i >= 0 {
			w.pending[i].Data = d.Data
		} else {
			w.pending = append(w.pending, d)
		}
	}
}

// openStore opens the store the configuration names
// (RuntimeConfig.Durability.Store, else the data directory's), loads it and checks the service's record
// decodes. Called by Start before anything listens.
func (r *Runtime) openStore() error {
	st, err := r.configuredStore()
	if err != nil || st == nil {
		return err
	}
	r.wa.store = st
	recs, err := st.Load()
	if err != nil {
		return err
	}
	rec, err := r.recovered(recs)
	if err != nil {
		return err
	}
	r.wa.rec = rec
	r.logRecovered(rec)
	return nil
}

// configuredStore returns the store the configuration names: Durability.Store,
// else the data directory's (opened), else none (nil).
func (r *Runtime) configuredStore() (Store, error) {
	if st := r.cfg.Durability.Store; st != nil || r.cfg.Durability.DataDir == "" {
		return st, nil
	}
	return OpenDataDir(DataDirConfig{Dir: r.cfg.Durability.DataDir, ID: r.cfg.ID, Service: r.spec.Name,
		Cluster: r.cfg.Label, ForgetLost: r.cfg.Durability.ForgetLostStore})
}

// recovered sorts the store's records into the service's and the layers'
// and checks that the service's decodes.
func (r *Runtime) recovered(recs map[string][]byte) (node.Recovered, error) {
	rec := node.Recovered{Service: recs[node.ServiceDurableKey], Layers: map[string][]byte{}}
	delete(recs, node.ServiceDurableKey)
	maps.Copy(rec.Layers, recs)
	if rec.Service != nil {
		if _, err := r.core.DecodeDurable(rec.Service); err != nil {
			return node.Recovered{}, fmt.Errorf("live: the store's service record: %w", err)
		}
	}
	return rec, nil
}

// logRecovered logs what the store held, when it held anything.
func (r *Runtime) logRecovered(rec node.Recovered) {
	if rec.Service != nil || len(rec.Layers) > 0 {
		r.log.Info("live: recovered durable state", zap.Int("service_bytes", len(rec.Service)),
			zap.Strings("layers", slices.Sorted(maps.Keys(rec.Layers))))
	}
}

// start runs the node's first event: EventInit, through the pipeline's
// Restart when the node has a store (its records recovered, the layers'
// restored before the event), then the layers' Start.
func (r *Runtime) startCore(now time.Time) {
	ev := node.Event{Kind: node.EventInit, At: now}
	if r.wa.store == nil {
		r.dispatch(ev, nil)
	} else {
		o, err := r.pipe.Restart(ev, r.wa.rec)
		if err != nil {
			// Start checked the record: a bug if it fails here.
			r.log.Error("live: restart from the store", zap.Error(err))
		}
		r.wa.rec = node.Recovered{}
		r.carryOut(o)
		r.drain()
	}
	r.carryOut(r.pipe.Start(now))
	r.drain()
}

// stageDurable adds an outcome's records to the batch and counts the step.
// Without a store there is nowhere to write them (Ephemeral, or a
// service and layers with nothing durable): they are dropped.
func (r *Runtime) stageDurable(o layer.Outcome) {
	if r.wa.store == nil {
		return
	}
	if len(o.Durable) > 0 {
		r.wa.stage(o.Durable)
	}
	if r.wa.holding() {
		r.wa.steps++
	}
}

// commitDue reports whether the batch must be committed now: the core
// goroutine has no message or call waiting, or the batch is full.
func (r *Runtime) commitDue() bool {
	return r.wa.holding() && (len(r.events) == 0 && len(r.appc) == 0 || r.wa.steps >= maxDurableBatch)
}

// commit writes and syncs the pending records, then sends the held
// messages in order. A failed write stops the node (fail-stop: what it
// sent would state promises it did not record) and returns false.
func (r *Runtime) commit() bool {
	if len(r.wa.pending) > 0 {
		start := time.Now()
		err := r.wa.store.Write(r.wa.pending)
		r.stats.durableSyncNanos.Add(uint64(time.Since(start)))
		if err != nil {
			r.failStore(err)
			return false
		}
		r.stats.durableCommits.Add(1)
		for _, w := range r.wa.pending {
			r.stats.durableRecords.Add(1)
			r.stats.durableBytes.Add(uint64(len(w.Data)))
		}
		clear(r.wa.pending)
		r.wa.pending = r.wa.pending[:0]
	}
	held := r.wa.held
	r.wa.held, r.wa.steps = nil, 0
	for _, s := range held {
		r.sendPeer(s)
	}
	return true
}

// failStore records a failed store write and stops the runtime.
func (r *Runtime) failStore(err error) {
	err = fmt.Errorf("%w: %w", ErrStoreFailed, err)
	r.log.Error("live: the store failed; stopping the node rather than send what it could not record", zap.Error(err))
	r.mu.Lock()
	r.err = err
	r.mu.Unlock()
	r.wa.held, r.wa.pending = nil, nil
	r.failed = true
	go r.Stop(context.Background())
}

// commitAtExit writes the records still pending when the core goroutine
// ends (Stop): nothing they state was sent, but a restart had better find
// them. The held sends are dropped, as Stop drops queued messages.
func (r *Runtime) commitAtExit() {
	if r.failed || len(r.wa.pending) == 0 {
		return
	}
	if err := r.wa.store.Write(r.wa.pending); err != nil {
		r.log.Error("live: write the store at stop", zap.Error(err))
	}
	r.wa.pending, r.wa.held = nil, nil
}
