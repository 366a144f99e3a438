package replayed

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/vmihailenco/msgpack/v5"
)

// encodingV1 is the version of the checkpoint encoding, its first field.
const encodingV1 = 1

// EncodeMsgpack implements msgpack.CustomEncoder: the checkpoint encoding
// (node.State.AppendCheckpoint) is the array
//
//	[1, self, base (durable bytes, an image or nil), base timers, log]
//
// where base timers are the timer names scheduled at an image and log is
// a uvarint count of inputs followed by each input's encoding
// (input.go). It is canonical: the same history gives the same
// bytes.
//
// A value that has not started is a durable projection (node.Durable:
// a fresh value that recovered from a node's current one, what
// Core.AppendDurable encodes and a live node's store keeps): it encodes as
// the array
//
//	[1, self, durable bytes (nil: the object keeps none)]
func (s *Service[O]) EncodeMsgpack(enc *msgpack.Encoder) error {
	if !s.started {
		if s.self == node.None {
			return errors.New("replayed: encoding a service that has neither started nor recovered")
		}
		if err := enc.EncodeArrayLen(3); err != nil {
			return err
		}
		if err := enc.EncodeUint(encodingV1); err != nil {
			return err
		}
		if err := enc.EncodeUint(uint64(s.self)); err != nil {
			return err
		}
		return enc.EncodeBytes(s.base)
	}
	n := binary.MaxVarintLen64
	for _, in := range s.log {
		n += len(in.enc)
	}
	log := binary.AppendUvarint(make([]byte, 0, n), uint64(len(s.log)))
	for _, in := range s.log {
		log = append(log, in.enc...)
	}
	if err := enc.EncodeArrayLen(5); err != nil {
		return err
	}
	if err := enc.EncodeUint(encodingV1); err != nil {
		return err
	}
	if err := enc.EncodeUint(uint64(s.self)); err != nil {
		return err
	}
	if err := enc.EncodeBytes(s.base); err != nil {
		return err
	}
	if err := enc.EncodeArrayLen(len(s.baseTimers)); err != nil {
		return err
	}
	for _, t := range s.baseTimers {
		if err := enc.EncodeString(t); err != nil {
			return err
		}
	}
	return enc.EncodeBytes(log)
}

// DecodeMsgpack implements msgpack.CustomDecoder. The input is untrusted:
// a malformed log, a message outside the registry, more inputs than
// Config.MaxInputs, or a replay that does not reproduce the logged
// observation (every input's with Config.CheckEveryInput) is an error (node.DecodeCheckpoint wraps it in
// node.ErrBadCheckpoint). On success the value holds the replayed object.
//
// A durable projection (three fields; Core.DecodeDurable reads one from a
// live node's store) gives a value that has not started, holding the
// durable bytes for Recover, once Config.New has accepted them. It is
// never stepped: Core.Restart hands it to Recover of a fresh value, whose
// Init builds the object. (A checkpoint whose body is a projection
// decodes to such a value too; any handler but Init on it panics.)
func (s *Service[O]) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n != 5 && n != 3 {
		return fmt.Errorf("replayed: %d fields, want 5 (a checkpoint) or 3 (a durable projection)", n)
	}
	version, err := dec.DecodeUint64()
	if err != nil {
		return err
	}
	if version != encodingV1 {
		return fmt.Errorf("replayed: encoding version %d, want %d", version, encodingV1)
	}
	self, err := dec.DecodeUint64()
	if err != nil {
		return err
	}
	if self == 0 || uint64(node.ID(self)) != self {
		return fmt.Errorf("replayed: node ID %d", self)
	}
	base, err := dec.DecodeBytes()
	if err != nil {
		return err
	}
	if n == 3 {
		if _, err := s.ad.build(node.ID(self), base); err != nil {
			return fmt.Errorf("replayed: %s: the durable projection of node %d: %w", s.ad.cfg.Name, self, err)
		}
		*s = Service[O]{ad: s.ad, self: node.ID(self), base: base, slot: new(slot[O])}
		return nil
	}
	timers, err := decodeTimers(dec)
	if err != nil {
		return err
	}
	logBytes, err := dec.DecodeBytes()
	if err != nil {
		return err
	}
	log, err := s.ad.decodeLog(logBytes, base != nil, len(timers) > 0)
	if err != nil {
		return err
	}
	obj, now, err := s.ad.rebuild(node.ID(self), base, timers, log, s.ad.cfg.CheckEveryInput)
	if err != nil {
		return fmt.Errorf("replayed: %s: %w", s.ad.cfg.Name, err)
	}
	obs := obj.Observe()
	fp, err := node.AppendCanonical(nil, obs)
	if err != nil {
		return fmt.Errorf("replayed: %s: encoding the observation: %w", s.ad.cfg.Name, err)
	}
	*s = Service[O]{ad: s.ad, started: true, self: node.ID(self), base: base, baseTimers: timers, timers: now,
		log: log, obs: obs, fp: fp, slot: new(slot[O])}
	s.slot.put(obj)
	return nil
}

// decodeTimers decodes the base's timer names: sorted, distinct, each a
// valid timer name.
func decodeTimers(dec *msgpack.Decoder) ([]string, error) {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > 1024 {
		return nil, fmt.Errorf("replayed: %d base timers", n)
	}
	var timers []string
	for i := 0; i < n; i++ {
		t, err := dec.DecodeString()
		if err != nil {
			return nil, err
		}
		if t == "" || len(t) > node.MaxTimerNameLen || (i > 0 && timers[i-1] >= t) {
			return nil, fmt.Errorf("replayed: base timer %q (names are sorted, distinct, 1..%d bytes)", t, node.MaxTimerNameLen)
		}
		timers = append(timers, t)
	}
	return timers, nil
}

// decodeLog decodes an encoded log. A log that starts an incarnation
// (from durable bytes or none, no timers) starts with its init; one after
// an image (based, with timers or not) may be empty and has none.
func (a *Adapter[O]) decodeLog(b []byte, based, timers bool) ([]*input, error) {
	count, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, errors.New("replayed: log: truncated count")
	}
	b = b[k:]
	if (count == 0 && !based) || count > uint64(a.cfg.MaxInputs) || count > uint64(len(b)) {
		return nil, fmt.Errorf("replayed: log of %d inputs (at most %d, %d bytes left)", count, a.cfg.MaxInputs, len(b))
	}
	log := make([]*input, 0, count)
	for i := uint64(0); i < count; i++ {
		in, rest, err := decodeInput(b, a.reg)
		if err != nil {
			return nil, fmt.Errorf("replayed: log: input %d: %w", i+1, err)
		}
		if in.kind == node.EventInit && (i > 0 || timers) {
			return nil, fmt.Errorf("replayed: log: input %d is an init", i+1)
		}
		if i == 0 && in.kind != node.EventInit && !based {
			return nil, fmt.Errorf("replayed: log: a first start's log starts with %v, not init", in.kind)
		}
		log = append(log, in)
		b = rest
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("replayed: log: %d bytes after the last input", len(b))
	}
	return log, nil
}
