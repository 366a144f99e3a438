package replayed

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/zeebo/xxh3"
)

// Service is the adapter's service value (see the package
// documentation): the durable bytes of the last durable point, the inputs
// since, the observation after them and, as a cache, the object. Build it
// with Adapter.Factory. Like any node.Service one handler runs at a time
// on a value; Clone, AppendFingerprint, the msgpack encoding and Observed
// only read it and may run concurrently on a value no one steps.
type Service[O any] struct {
	ad      *Adapter[O]
	started bool
	self    node.ID
	// base is the bytes the object was built from: the durable bytes of
	// the last reset (nil: a first start) or the last image
	// (Rebaser). baseTimers are the timer names the object had scheduled
	// at the image (none at a start). Shared by clones, never modified.
	base       []byte
	baseTimers []string
	// timers are the timer names the object has scheduled now (sorted;
	// replaced, never modified, when they change).
	timers []string
	// log is the inputs since base. Clones share its prefix: a clone's
	// slice has no spare capacity, so appending copies.
	log []*input
	// obs is the observation after log; fp its canonical encoding (the
	// fingerprint), shared by clones and never modified.
	obs O
	fp  []byte
	// slot holds the object at (base, log) when one is materialised; src
	// is the slot of the value this one was cloned from, which its first
	// step may take the object from.
	slot *slot[O]
	src  *slot[O]
}

var (
	_ node.Service            = (*Service[int])(nil)
	_ node.Cloner             = (*Service[int])(nil)
	_ node.Durable            = (*Service[int])(nil)
	_ node.Fingerprinter      = (*Service[int])(nil)
	_ node.Neighborer         = (*Service[int])(nil)
	_ node.SendRefusedHandler = (*Service[int])(nil)
)

// Observation returns the observation after the last input (the zero
// value before Init).
func (s *Service[O]) Observation() O { return s.obs }

// MarshalJSON renders the observation: what a live node's /status shows
// as its state.
func (s *Service[O]) MarshalJSON() ([]byte, error) { return json.Marshal(s.obs) }

// Inputs returns the number of inputs in the log since the last durable
// point or image.
func (s *Service[O]) Inputs() int { return len(s.log) }

// String summarises the state on one line (trace show prints it).
func (s *Service[O]) String() string {
	return fmt.Sprintf("%d inputs since a base of %d bytes; observed %+v", len(s.log), len(s.base), s.obs)
}

// Init implements node.Service: it builds the object from the durable
// bytes Recover kept (none on a first start) and runs its Init.
func (s *Service[O]) Init(env node.Env) {
	s.self, s.started = env.Self(), true
	s.log, s.baseTimers, s.timers = nil, nil, nil
	s.slot.take() // a value is started once per incarnation
	s.step(env, &input{kind: node.EventInit, at: env.Now()}, func(o Object[O], e node.Env) { o.Init(e) })
}

// HandleMessage implements node.Service.
func (s *Service[O]) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	s.step(env, &input{kind: node.EventMessage, at: env.Now(), peer: from, msg: msg},
		func(o Object[O], e node.Env) { o.HandleMessage(e, from, msg) })
}

// HandleTimer implements node.Service.
func (s *Service[O]) HandleTimer(env node.Env, name string) {
	s.step(env, &input{kind: node.EventTimer, at: env.Now(), timer: name},
		func(o Object[O], e node.Env) { o.HandleTimer(e, name) })
}

// HandleApp implements node.Service.
func (s *Service[O]) HandleApp(env node.Env, call node.Message) {
	s.step(env, &input{kind: node.EventApp, at: env.Now(), msg: call},
		func(o Object[O], e node.Env) { o.HandleApp(e, call) })
}

// HandleTransportError implements node.Service.
func (s *Service[O]) HandleTransportError(env node.Env, peer node.ID) {
	s.step(env, &input{kind: node.EventTransportError, at: env.Now(), peer: peer},
		func(o Object[O], e node.Env) { o.HandleTransportError(e, peer) })
}

// HandleSendRefused implements node.SendRefusedHandler: the object's, if
// it has one (SendRefusedObject).
func (s *Service[O]) HandleSendRefused(env node.Env, to node.ID, msg node.Message) {
	s.step(env, &input{kind: node.EventSendRefused, at: env.Now(), peer: to, msg: msg},
		func(o Object[O], e node.Env) {
			if h, ok := o.(SendRefusedObject); ok {
				h.HandleSendRefused(e, to, msg)
			}
		})
}

// step runs one handler call on the object and logs the input unless it
// changed neither the observation nor the scheduled timers.
func (s *Service[O]) step(env node.Env, in *input, run func(Object[O], node.Env)) {
	if !s.started && in.kind != node.EventInit {
		// A durable projection decoded as a checkpoint's body: no object,
		// no incarnation to step.
		panic(fmt.Sprintf("replayed: %s: %v on a service that has not started (a durable projection)", s.ad.cfg.Name, in.kind))
	}
	obj := s.own()
	rec := &recordEnv{Env: env, in: in}
	if in.kind == node.EventTimer {
		rec.touched = append(rec.touched, timerBefore{in.timer, true}) // the core unscheduled it
	}
	run(obj, rec)
	obs := obj.Observe()
	fp, err := node.AppendCanonical(nil, obs)
	if err != nil {
		panic(fmt.Sprintf("replayed: %s: encoding the observation: %v", s.ad.cfg.Name, err))
	}
	s.ad.stats.steps.Add(1)
	if in.kind == node.EventInit || s.ad.cfg.KeepEveryInput || !bytes.Equal(fp, s.fp) || rec.timersChanged() {
		in.obs = xxh3.Hash(fp)
		if in.enc, err = appendInput(nil, s.ad.reg, in); err != nil {
			panic(fmt.Sprintf("replayed: %s: logging %v: %v", s.ad.cfg.Name, in, err))
		}
		s.log = append(s.log, in)
		s.ad.stats.logged.Add(1)
	}
	s.obs, s.fp = obs, fp
	s.timers = rec.scheduled(s.timers)
	if len(s.log) > 0 && len(s.log)%s.ad.cfg.RebaseEvery == 0 {
		s.rebase(obj)
	}
	s.slot.put(obj)
}

// rebase makes an image of obj the value's base, with an empty log, if
// obj writes one and an object built from it observes what obj does.
func (s *Service[O]) rebase(obj Object[O]) {
	r, ok := obj.(Rebaser)
	if !ok {
		return
	}
	img, ok := r.AppendImage(nil)
	if !ok {
		return
	}
	s.ad.stats.images.Add(1)
	built, err := s.ad.build(s.self, img)
	if err != nil {
		return
	}
	fp, err := node.AppendCanonical(nil, built.Observe())
	if err != nil || !bytes.Equal(fp, s.fp) {
		return
	}
	s.ad.stats.rebases.Add(1)
	s.base, s.baseTimers, s.log = img, s.timers, nil
}

// own returns the object at (base, log) for this value to step: its own,
// else its parent's, else a replay. A replay that fails is a broken
// invariant (the object is not deterministic): it panics, and the shell
// reports it as the handler's panic.
func (s *Service[O]) own() Object[O] {
	if o := s.slot.take(); o != nil {
		return o
	}
	if o := s.src.take(); o != nil {
		s.src = nil
		s.ad.stats.takes.Add(1)
		return o
	}
	s.src = nil
	o, _, err := s.ad.rebuild(s.self, s.base, s.baseTimers, s.log, false)
	if err != nil {
		panic(fmt.Sprintf("replayed: %s: node %v: %v", s.ad.cfg.Name, s.self, err))
	}
	return o
}

// Clone implements node.Cloner: the clone shares the durable bytes, the
// log's prefix and the observation, and may take this value's object when
// it first steps.
func (s *Service[O]) Clone() node.Service {
	c := *s
	c.log = s.log[:len(s.log):len(s.log)]
	c.slot = new(slot[O])
	c.src = s.slot
	if s.slot.p.Load() == nil && s.src != nil {
		c.src = s.src
	}
	return &c
}

// Recover implements node.Durable: the new incarnation starts from the
// bytes the one that went down kept on stable storage (DurableObject;
// none without it). previous is only read: its object, borrowed for the
// read, goes back to it. previous may also be a durable projection (a
// value that recovered and has not started: what Core.AppendDurable
// encodes and Core.DecodeDurable decodes from a live node's store), whose
// bytes are taken as they are.
func (s *Service[O]) Recover(previous node.Service) {
	p, ok := previous.(*Service[O])
	if !ok {
		return
	}
	s.self = p.self
	if !p.started {
		s.base = p.base // never modified: shared
		return
	}
	obj := p.borrow()
	if d, ok := obj.(DurableObject); ok {
		s.base = d.AppendDurable(nil)
	}
	p.giveBack(obj)
}

// borrow returns the object at p's point for reading, replaying if none
// is materialised; giveBack returns it.
func (s *Service[O]) borrow() Object[O] {
	if o := s.slot.take(); o != nil {
		return o
	}
	if o := s.src.take(); o != nil {
		return o
	}
	o, _, err := s.ad.rebuild(s.self, s.base, s.baseTimers, s.log, false)
	if err != nil {
		panic(fmt.Sprintf("replayed: %s: node %v: %v", s.ad.cfg.Name, s.self, err))
	}
	return o
}

func (s *Service[O]) giveBack(o Object[O]) {
	if s.slot.p.Load() == nil {
		s.slot.giveBack(o)
	}
}

// AppendFingerprint implements node.Fingerprinter: the canonical encoding
// of the observation.
func (s *Service[O]) AppendFingerprint(dst []byte) ([]byte, error) {
	return append(dst, s.fp...), nil
}

// Neighbors implements node.Neighborer: Config.Neighbors of the
// observation, else the peers that sent the node messages since its last
// durable point.
func (s *Service[O]) Neighbors(self node.ID) []node.ID {
	if f := s.ad.cfg.Neighbors; f != nil {
		return f(self, s.obs)
	}
	var ids []node.ID
	for _, in := range s.log {
		if in.kind == node.EventMessage && in.peer != self {
			ids = append(ids, in.peer)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}
