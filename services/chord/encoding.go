package chord

import (
	"github.com/vmihailenco/msgpack/v5"

	"github.com/seed6eee2ec7/crystalball/node"
)

// stateFields is the number of exported fields of State, i.e. the length of
// its msgpack array.
const stateFields = 5

// EncodeMsgpack implements msgpack.CustomEncoder. It writes exactly what
// msgpack's reflection would write for State's as_array layout with compact
// integers (a test holds it to that), so decoding needs no custom code; it
// exists because the explorer encodes a node state for every state it
// visits, and a finger table is 32 IDs that reflection would visit one by
// one.
func (s *State) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := stateWriter{enc: enc}
	w.check(enc.EncodeArrayLen(stateFields))
	w.check(enc.EncodeUint(uint64(s.Status)))
	w.check(enc.EncodeUint(uint64(s.Bootstrap)))
	w.check(enc.EncodeUint(uint64(s.Pred)))
	w.ids(s.Successors)
	w.ids(s.Fingers)
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
