package steering

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
)

// A node's steering is durable state: the filters in force,
// the kinds held past their budget and the error paths its rounds replay
// are what a node learned about the futures it fears, and a reset is
// exactly such a future (the zoo's lease: the grantor's filter against a
// second grant died with the reset it predicted). The Layer is a
// layer.Durable: the pipeline asks for its state after every hook and
// makes it durable with the step's other writes — the live node's store,
// the emulator's memory —, and gives it back before a restarted node
// handles its first event (live) or right after a reset went through the
// layers (emulation). The first round re-checks what came back: a
// replayed path still failing keeps its filter only if the filter passes
// the safety check and the liveness guard again on the world the node
// returns to (keepLive), an escalated kind stays held until a fresh round
// or the check finds it safe, and the rest is replaced by what the round
// installs. The node's gathers take in the peers its filters are about
// (include.go), so that world holds them.

// DurableFormat versions the Layer's durable record.
const DurableFormat = "crystalball-steering-durable/1"

// Bounds of a durable record a restarting node reads back (it is our own
// bytes, but a store can be damaged: a record past them is refused whole).
const (
	maxDurableBytes   = 4 << 20
	maxDurableFilters = 1024
)

// durableState is the Layer's durable record (JSON).
type durableState struct {
	Format  string        `json:"format"`
	Filters []Filter      `json:"filters,omitempty"`
	Holds   []durableHold `json:"holds,omitempty"`
	Paths   []durablePath `json:"paths,omitempty"`
	// View is the immediate check's view of the other nodes (CheckView),
	// Sighted when a snapshot last held one of them: what a restarted
	// node still knows about its neighbours, so its first events are
	// judged on it (RememberView).
	View    []durableKnown `json:"view,omitempty"`
	Sighted time.Time      `json:"sighted,omitempty"`
}

// durableKnown is a node of the check's view: its checkpoint encoding
// (node.DecodeCheckpoint) and when the snapshot that held it completed.
type durableKnown struct {
	Node  node.ID   `json:"node"`
	At    time.Time `json:"at"`
	State []byte    `json:"state"`
}

// durableHold is an escalation (gate.go).
type durableHold struct {
	Kind   node.EventKind `json:"kind"`
	Peer   node.ID        `json:"peer,omitempty"`
	Name   string         `json:"name,omitempty"`
	Filter *Filter        `json:"filter,omitempty"`
	Since  time.Time      `json:"since"`
	// Free is the end of a released kind's free window. Records no longer
	// hold released kinds (DurableState); one that does, written before
	// that rule, has them skipped on restore.
	Free time.Time `json:"free,omitempty"`
}

// durablePath is a stored error path, as records (decoded by the round's
// model when it replays). Checked is the filter that passed its check in
// the incarnation that stored it, kept for /status and the record's
// readers; a restarted node does not trust it (importPaths).
type durablePath struct {
	Property string                     `json:"property"`
	Path     []consequence.ActionRecord `json:"path"`
	Checked  *Filter                    `json:"checked,omitempty"`
}

var _ layer.Durable = (*Layer)(nil)

// DurableKey names the Layer's record in the node's store
// (layer.Durable).
func (l *Layer) DurableKey() string { return "steering" }

// DurableState returns the Layer's durable record and whether it changed
// since the last call (layer.Durable; core goroutine). It is cheap
// when nothing changed: the gate's and the paths' versions are compared
// first.
func (l *Layer) DurableState() ([]byte, bool) {
	if l.gate == nil {
		return nil, false
	}
	l.mu.Lock()
	paths, pv := l.paths, l.pathsVersion
	l.mu.Unlock()
	if l.savedIsCurrent(pv) {
		return l.saved, false
	}
	st := durableState{Format: DurableFormat, Filters: l.outlivingFilters(), Paths: paths, Sighted: l.gate.sighted}
	st.View = l.gate.exportView()
	st.Holds = l.outlivingHolds()
	data, err := json.Marshal(st)
	if err != nil {
		// Filters, holds and records are plain data: cannot happen.
		panic(fmt.Sprintf("steering: encoding the durable state: %v", err))
	}
	changed := string(data) != string(l.saved)
	l.saved, l.savedGate, l.savedPaths, l.savedView = data, l.gate.version, pv, l.gate.viewVersion
	return data, changed
}

// savedIsCurrent reports whether the record saved last is still the
// state: neither the gate (its filters, escalations and view) nor the
// paths (at version pv) changed since.
func (l *Layer) savedIsCurrent(pv uint64) bool {
	return l.gate.version == l.savedGate && pv == l.savedPaths && l.gate.viewVersion == l.savedView && l.saved != nil
}

// outlivingHolds returns the gate's holds that outlive a reset of this
// node, sorted (sortHolds): the kinds held under a filter about that
// reset. A kind in its free window was released on the world of this
// incarnation (the liveness guard, or its hold's bound): the release is
// no verdict on the world after the reset the filter predicts, so it does
// not outlive the reset — the kind comes back under its filter and a
// fresh budget.
func (l *Layer) outlivingHolds() []durableHold {
	var hs []durableHold
	for k, e := range l.gate.escalated {
		if e.heldByFilter() && l.why[*e.filter].Reset {
			hs = append(hs, durableHold{Kind: k.kind, Peer: k.peer, Name: k.name, Filter: e.filter, Since: e.since})
		}
	}
	sortHolds(hs)
	return hs
}

// outlivingFilters returns the filters in force that outlive a reset of
// this node: those whose prediction resets it (Explanation.Reset). A
// filter about the current incarnation's own future is moot once the node
// restarts with a fresh state; the zoo lease's grantor keeps its filter
// against the grant after its restart, since the prediction is that
// restart. The rule does not settle what restored filters cost RandTree
// under churn: there the restored filters' paths do reset their node
// (docs/history/results-steering-rules.md, "What a reset keeps").
func (l *Layer) outlivingFilters() []Filter {
	var out []Filter
	for _, f := range l.gate.Filters() {
		if l.why[f].Reset {
			out = append(out, f)
		}
	}
	return out
}

// RestoreDurable puts a durable record back (layer.Durable; core
// goroutine): the filters in force, the held kinds and the error paths. A
// record that does not decode, is of another format or node, or exceeds
// the bounds is refused whole with an error (the node starts empty).
func (l *Layer) RestoreDurable(data []byte) error {
	if l.gate == nil {
		return errors.New("steering: RestoreDurable before Attach")
	}
	st, err := decodeDurable(data, l.self)
	if err != nil {
		return err
	}
	l.gate.Install(st.Filters)
	l.gate.ForgetEscalations()
	l.gate.restoreHolds(st.Holds)
	l.explorer.importPaths(st.Paths)
	if err := l.gate.importView(st.View, st.Sighted); err != nil {
		l.log.Error("steering: the durable view does not decode; the check starts without it", slog.Any("error", err))
	}
	if l.cfg.Controller.RecallView {
		l.recallView(st.View)
	}
	l.install(l.gate.Filters(), time.Time{})
	l.mu.Lock()
	l.paths = st.Paths
	l.mu.Unlock()
	l.saved, l.savedGate, l.savedPaths, l.savedView = append([]byte(nil), data...), l.gate.version, l.pathsVersion, l.gate.viewVersion
	return nil
}

// restoreHolds makes the held kinds of a durable record escalations of
// this (gate) controller; a released kind is skipped, since a release
// does not outlive the reset (DurableState).
func (c *Controller) restoreHolds(hs []durableHold) {
	for _, h := range hs {
		if !h.Free.IsZero() {
			continue
		}
		if c.escalated == nil {
			c.escalated = map[eventKey]*escalation{}
		}
		k := eventKey{kind: h.Kind, peer: h.Peer, name: h.Name}
		c.escalated[k] = &escalation{since: h.Since, filter: h.Filter, key: k}
	}
}

// decodeDurable reads a durable record of node self.
func decodeDurable(data []byte, self node.ID) (durableState, error) {
	var st durableState
	if len(data) > maxDurableBytes {
		return st, fmt.Errorf("steering: durable record of %d bytes (at most %d)", len(data), maxDurableBytes)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("steering: durable record: %w", err)
	}
	if err := st.checkFormatAndBounds(); err != nil {
		return st, err
	}
	// The first entry, in record order, that is not node self's refuses
	// the record.
	return st, cmp.Or(st.ownershipErrors(self)...)
}

// checkFormatAndBounds refuses a record of another format, or with more
// than maxDurableFilters entries in one of its lists.
func (st *durableState) checkFormatAndBounds() error {
	if st.Format != DurableFormat {
		return fmt.Errorf("steering: durable record of format %q, want %q", st.Format, DurableFormat)
	}
	if slices.Max([]int{len(st.Filters), len(st.Holds), len(st.Paths), len(st.View)}) > maxDurableFilters {
		return fmt.Errorf("steering: durable record with %d filters, %d holds, %d paths, %d nodes in view (at most %d each)", len(st.Filters), len(st.Holds), len(st.Paths), len(st.View), maxDurableFilters)
	}
	return nil
}

// ownershipErrors judges every filter, hold and path of the record, in
// record order, for node self: one entry each, nil for those that belong
// to self (checkDurableFilter, durableHold.checkFor).
func (st *durableState) ownershipErrors(self node.ID) []error {
	errs := make([]error, 0, len(st.Filters)+len(st.Holds)+len(st.Paths))
	for i := range st.Filters {
		errs = append(errs, checkDurableFilter(&st.Filters[i], self))
	}
	for _, h := range st.Holds {
		errs = append(errs, h.checkFor(self))
	}
	for _, p := range st.Paths {
		errs = append(errs, checkDurableFilter(p.Checked, self))
	}
	return errs
}

// checkFor refuses a hold of an unknown event kind, or whose filter is
// not node self's.
func (h durableHold) checkFor(self node.ID) error {
	if h.Kind < node.EventMessage || h.Kind > node.EventTransportError {
		return fmt.Errorf("steering: durable hold of event kind %d", h.Kind)
	}
	return checkDurableFilter(h.Filter, self)
}

// checkDurableFilter refuses a filter read back that is not installed at
// node self or is of an unknown kind (nil: no filter, nothing to refuse).
func checkDurableFilter(f *Filter, self node.ID) error {
	if f != nil && (f.Node != self || f.Kind < FilterMessage || f.Kind > FilterTransportError) {
		return fmt.Errorf("steering: durable record of %v holds the filter %v", self, *f)
	}
	return nil
}

// exportView returns the check's view of the other nodes, ascending by
// node (nil when it holds none). A state that does not encode is left out.
func (c *Controller) exportView() []durableKnown {
	if c.known == nil {
		return nil
	}
	var out []durableKnown
	for _, id := range c.known.ids {
		n := c.known.nodes[id]
		if id == c.self || n.st == nil {
			continue
		}
		b, err := n.st.AppendCheckpoint(nil)
		if err != nil {
			continue
		}
		out = append(out, durableKnown{Node: id, At: n.at, State: b})
	}
	return out
}

// importView makes ks the check's view (RestoreDurable). A checkpoint
// that does not decode fails the whole view, which is then left empty.
func (c *Controller) importView(ks []durableKnown, sighted time.Time) error {
	c.known, c.sighted = nil, sighted
	if len(ks) == 0 {
		c.viewVersion++
		return nil
	}
	k := &knownView{nodes: make(map[node.ID]knownState, len(ks))}
	for _, d := range ks {
		st, err := node.DecodeCheckpoint(d.State, c.cfg.Spec.New)
		if err != nil {
			c.viewVersion++
			return fmt.Errorf("steering: durable view of %v: %w", d.Node, err)
		}
		k.nodes[d.Node] = knownState{st: &st, at: d.At}
	}
	c.setKnown(k)
	return nil
}

// sortHolds orders holds by kind, peer and name, so equal states encode
// equally.
func sortHolds(hs []durableHold) {
	slices.SortFunc(hs, func(a, b durableHold) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Peer, b.Peer), strings.Compare(a.Name, b.Name))
	})
}

// exportPaths returns the stored error paths as records, and whether they
// changed since the last export (the runner's side, after Explore).
func (c *Controller) exportPaths() ([]durablePath, bool) {
	if c.pathsExported == c.pathsVersion {
		return nil, false
	}
	c.pathsExported = c.pathsVersion
	reg, err := c.cfg.Spec.Registry()
	if err != nil {
		return nil, false // New validated the Spec
	}
	out := make([]durablePath, 0, len(c.paths))
	for _, sp := range c.paths {
		if recs := storedRecords(reg, sp); recs != nil {
			out = append(out, durablePath{Property: sp.property, Path: recs, Checked: sp.checked})
		}
	}
	return out, true
}

// storedRecords returns the records of stored path sp: those it was read
// back as, else its actions recorded with reg — nil if reg cannot encode
// one of its messages, and then the path is not kept.
func storedRecords(reg *node.Registry, sp storedPath) []consequence.ActionRecord {
	if sp.recs != nil {
		return sp.recs
	}
	recs := make([]consequence.ActionRecord, 0, len(sp.path))
	for _, a := range sp.path {
		r, err := consequence.RecordAction(reg, a)
		if err != nil {
			return nil
		}
		recs = append(recs, r)
	}
	return recs
}

// importPaths replaces the stored error paths with records read back; the
// round that replays one decodes it with its model.
func (c *Controller) importPaths(ps []durablePath) {
	c.paths = c.paths[:0]
	for _, p := range ps {
		// The filter was checked against the world of the incarnation
		// that stored it: the next round that replays the path checks it
		// again, on the world the node came back to (safety and the
		// liveness guard, keepLive), before it counts as checked.
		c.paths = append(c.paths, storedPath{property: p.Property, recs: p.Path, restored: true, key: pathKey(p.Property, p.Path)})
	}
	c.pathsVersion++
	c.pathsExported = c.pathsVersion
}
