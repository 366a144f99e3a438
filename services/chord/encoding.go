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
	w := node.StateWriter{Enc: enc}
	w.Check(enc.EncodeArrayLen(stateFields))
	w.Check(enc.EncodeUint(uint64(s.Status)))
	w.Check(enc.EncodeUint(uint64(s.Bootstrap)))
	w.Check(enc.EncodeUint(uint64(s.Pred)))
	w.IDs(s.Successors)
	w.IDs(s.Fingers)
	return w.Err()
}
