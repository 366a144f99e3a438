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
//	[1, self, durable bytes (or nil), log]
//
// where log is a uvarint count of inputs followed by each input's
// encoding (input.go). It is canonical: the same history gives the same
// bytes.
func (s *Service[O]) EncodeMsgpack(enc *msgpack.Encoder) error {
	if !s.started {
		return errors.New("replayed: encoding a service that has not started")
	}
	n := binary.MaxVarintLen64
	for _, in := range s.log {
		n += len(in.enc)
	}
	log := binary.AppendUvarint(make([]byte, 0, n), uint64(len(s.log)))
	for _, in := range s.log {
		log = append(log, in.enc...)
	}
	if err := enc.EncodeArrayLen(4); err != nil {
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
	return enc.EncodeBytes(log)
}

// DecodeMsgpack implements msgpack.CustomDecoder. The input is untrusted:
// a malformed log, a message outside the registry, more inputs than
// Config.MaxInputs, or a replay that does not reproduce every logged
// observation is an error (node.DecodeCheckpoint wraps it in
// node.ErrBadCheckpoint). On success the value holds the replayed object.
func (s *Service[O]) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n != 4 {
		return fmt.Errorf("replayed: %d fields, want 4", n)
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
	logBytes, err := dec.DecodeBytes()
	if err != nil {
		return err
	}
	log, err := s.ad.decodeLog(logBytes)
	if err != nil {
		return err
	}
	obj, err := s.ad.rebuild(node.ID(self), base, log, true)
	if err != nil {
		return fmt.Errorf("replayed: %s: %w", s.ad.cfg.Name, err)
	}
	obs := obj.Observe()
	fp, err := node.AppendCanonical(nil, obs)
	if err != nil {
		return fmt.Errorf("replayed: %s: encoding the observation: %w", s.ad.cfg.Name, err)
	}
	*s = Service[O]{ad: s.ad, started: true, self: node.ID(self), base: base, log: log, obs: obs, fp: fp, slot: new(slot[O])}
	s.slot.put(obj)
	return nil
}

// decodeLog decodes an encoded log. Its first input, and only its first,
// is the incarnation's init.
func (a *Adapter[O]) decodeLog(b []byte) ([]*input, error) {
	count, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, errors.New("replayed: log: truncated count")
	}
	b = b[k:]
	if count == 0 || count > uint64(a.cfg.MaxInputs) || count > uint64(len(b)) {
		return nil, fmt.Errorf("replayed: log of %d inputs (at most %d, %d bytes left)", count, a.cfg.MaxInputs, len(b))
	}
	log := make([]*input, 0, count)
	for i := uint64(0); i < count; i++ {
		in, rest, err := decodeInput(b, a.reg)
		if err != nil {
			return nil, fmt.Errorf("replayed: log: input %d: %w", i+1, err)
		}
		if (i == 0) != (in.kind == node.EventInit) {
			return nil, fmt.Errorf("replayed: log: input %d is %v (the first and only the first is init)", i+1, in.kind)
		}
		log = append(log, in)
		b = rest
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("replayed: log: %d bytes after the last input", len(b))
	}
	return log, nil
}
