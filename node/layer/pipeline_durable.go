package layer

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/zeebo/xxh3"
)

// durability is a Pipeline's durable bookkeeping: which layers are
// Durable layers, the last bytes each made durable (what a reset restores),
// and the hash of the service's last durable projection (what a step's
// projection is compared with). Its methods are called by the Pipeline's,
// on the shell's one goroutine.
type durability struct {
	// persist is PipelineConfig.Persist.
	persist bool
	// layers[i] is the slot of the Pipeline's layer i, nil when that layer
	// is not a Durable.
	layers []*durableSlot
	// svcHash is the xxh3-128 of the last service projection emitted (or
	// recovered); svcSet says there was one.
	svcHash xxh3.Uint128
	svcSet  bool
	// scratch is the buffer projections are encoded into.
	scratch []byte
}

// durableSlot is one Durable and the last bytes it made durable.
type durableSlot struct {
	l    Durable
	key  string
	last []byte
	has  bool
}

// init finds the Durable layers among layers and checks their keys:
// non-empty, unique, and not ServiceDurableKey.
func (d *durability) init(persist bool, layers []Layer) error {
	d.persist = persist
	d.layers = make([]*durableSlot, len(layers))
	seen := map[string]bool{}
	for i, l := range layers {
		dl, ok := l.(Durable)
		if !ok {
			continue
		}
		key := dl.DurableKey()
		switch {
		case key == "":
			return fmt.Errorf("layer: durable layer %T has an empty DurableKey", l)
		case key == node.ServiceDurableKey:
			return fmt.Errorf("layer: durable layer %T uses the service's key %q", l, key)
		case seen[key]:
			return fmt.Errorf("layer: two durable layers use the key %q", key)
		}
		seen[key] = true
		d.layers[i] = &durableSlot{l: dl, key: key}
	}
	return nil
}

// note asks layer i, if it is durable, whether its durable state changed,
// and records a change in o.Durable.
func (d *durability) note(o *Outcome, i int) {
	s := d.layers[i]
	if s == nil {
		return
	}
	data, changed := s.l.DurableState()
	if !changed || (s.has && bytes.Equal(data, s.last)) {
		return
	}
	s.last, s.has = data, true
	put(o, s.key, data)
}

// noteService records the service's durable projection in o.Durable when
// its bytes changed since the last one (Persist only).
func (d *durability) noteService(o *Outcome, c *node.Core) {
	if !d.persist {
		return
	}
	b, ok, err := c.AppendDurable(d.scratch[:0])
	if err != nil {
		o.Errors = append(o.Errors, err)
		return
	}
	if !ok {
		return
	}
	d.scratch = b
	h := xxh3.Hash128(b)
	if d.svcSet && h == d.svcHash {
		return
	}
	d.svcHash, d.svcSet = h, true
	put(o, node.ServiceDurableKey, slices.Clone(b))
}

// restore gives every durable layer the last bytes it made durable, after
// an EventReset went through the layers; a layer that never made any keeps
// what the reset left it. A failed restore is an error of o.
func (d *durability) restore(o *Outcome) {
	for _, s := range d.layers {
		if s == nil || !s.has {
			continue
		}
		if err := s.l.RestoreDurable(s.last); err != nil {
			o.Errors = append(o.Errors, fmt.Errorf("layer: restore durable layer %T (%q): %w", s.l, s.key, err))
		}
		// The layer now holds s.last again (or, failing, starts empty): a
		// change it reports is compared with s.last on its next note.
	}
}

// recover takes the records of a restart: each durable layer's is restored
// into it (errors returned, the layer then starts empty) and kept as its
// last bytes, and the service projection's hash is remembered.
func (d *durability) recover(rec node.Recovered) []error {
	var errs []error
	for _, s := range d.layers {
		if s == nil {
			continue
		}
		data, ok := rec.Layers[s.key]
		if !ok {
			continue
		}
		if err := s.l.RestoreDurable(data); err != nil {
			errs = append(errs, fmt.Errorf("layer: restore durable layer %T (%q) from the store: %w", s.l, s.key, err))
			continue
		}
		s.last, s.has = data, true
	}
	if rec.Service != nil {
		d.svcHash, d.svcSet = xxh3.Hash128(rec.Service), true
	}
	return errs
}

// put sets key's record in o.Durable, replacing an earlier one of the same
// call: only the latest value of a key needs to reach the disk.
func put(o *Outcome, key string, data []byte) {
	for i := range o.Durable {
		if o.Durable[i].Key == key {
			o.Durable[i].Data = data
			return
		}
	}
	o.Durable = append(o.Durable, node.DurableWrite{Key: key, Data: data})
}

// Restart runs ev, an EventInit, as the first event of a node that
// restarted from its store: each Durable gets its record back
// (RestoreDurable) before any hook sees the event, then ev goes through
// the layers as Step's would and the core starts from the service's
// record (Core.Restart: fresh.Recover(decoded) then Init). rec is what
// the store held: the records this Pipeline's predecessor emitted. An
// empty rec makes Restart a Step of ev. A service record that does not
// decode is an error wrapping ErrBadDurable, and nothing has run: the
// shell must not start the node empty (it could break a promise). A
// layer's failed restore is in Outcome.Errors, and that layer starts
// empty.
func (p *Pipeline) Restart(ev node.Event, rec node.Recovered) (Outcome, error) {
	if ev.Kind != node.EventInit {
		return Outcome{}, fmt.Errorf("%w: Restart takes an init event, got %v", node.ErrInvalidEvent, ev.Kind)
	}
	var previous node.Service
	if rec.Service != nil && p.core.IsDurable() {
		var err error
		if previous, err = p.core.DecodeDurable(rec.Service); err != nil {
			return Outcome{}, fmt.Errorf("layer: restart: %w", err)
		}
	}
	errs := p.durable.recover(rec)
	o := p.stepFrom(0, ev, nil, false, previous)
	o.Errors = append(errs, o.Errors...)
	return o, nil
}
