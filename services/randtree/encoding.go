package randtree

import (
	"github.com/vmihailenco/msgpack/v5"

	"github.com/seed6eee2ec7/crystalball/node"
)

// stateFields is the number of exported fields of State, i.e. the length of
// its msgpack array.
const stateFields = 9

// EncodeMsgpack implements msgpack.CustomEncoder. It writes exactly what
// msgpack's reflection would write for State's as_array layout with compact
// integers (a test holds it to that), so decoding needs no custom code; it
// exists because the explorer encodes a node state for every state it
// visits, and skipping reflection per slice element halves that cost.
func (s *State) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := stateWriter{enc: enc}
	w.check(enc.EncodeArrayLen(stateFields))
	w.check(enc.EncodeUint(uint64(s.Status)))
	w.check(enc.EncodeUint(uint64(s.Root)))
	w.check(enc.EncodeUint(uint64(s.Parent)))
	w.ids(s.Children)
	w.ids(s.Siblings)
	w.ids(s.Peers)
	w.ids(s.Targets)
	w.check(enc.EncodeInt(int64(s.NextTarget)))
	w.check(enc.EncodeUint(uint64(s.PendingRoot)))
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

// ids writes a set as reflection writes a []node.ID: nil as msgpack nil.
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
