package pastry

import (
	"github.com/vmihailenco/msgpack/v5"

	"github.com/seed6eee2ec7/crystalball/node"
)

// stateFields is the number of exported fields of State, i.e. the length of
// its msgpack array.
const stateFields = 6

// EncodeMsgpack implements msgpack.CustomEncoder. It writes exactly what
// msgpack's reflection would write for State's as_array layout with compact
// integers (a test holds it to that), so decoding needs no custom code; it
// exists because the explorer encodes a node state for every state it
// visits, and reflection visits a 32-entry routing table one entry at a
// time.
func (s *State) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := stateWriter{enc: enc}
	w.check(enc.EncodeArrayLen(stateFields))
	w.check(enc.EncodeUint(uint64(s.Status)))
	w.check(enc.EncodeUint(uint64(s.Bootstrap)))
	w.ids(s.Left)
	w.ids(s.Right)
	w.ids(s.Table)
	if s.Misses == nil {
		w.check(enc.EncodeNil())
		return w.err
	}
	w.check(enc.EncodeArrayLen(len(s.Misses)))
	for _, m := range s.Misses {
		w.check(enc.EncodeArrayLen(2))
		w.check(enc.EncodeUint(uint64(m.Peer)))
		w.check(enc.EncodeInt(int64(m.Count)))
	}
	return w.err
}

// stateWriter keeps the first encoding error, so EncodeMsgpack reads as the
// field list it mirrors.
type stateWriter struct {
	enc *msgpack.Encoder
	err error
}

func (w *stateWriter) check(err error) {
	if w.err == nil {
		w.err = err
	}
}

// ids writes a list as reflection writes a []node.ID: nil as msgpack nil.
func (w *stateWriter) ids(s []node.ID) {
	if s == nil {
		w.check(w.enc.EncodeNil())
		return
	}
	w.check(w.enc.EncodeArrayLen(len(s)))
	for _, id := range s {
		w.check(w.enc.EncodeUint(uint64(id)))
	}
}
