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
	w := node.StateWriter{Enc: enc}
	w.Check(enc.EncodeArrayLen(stateFields))
	w.Check(enc.EncodeUint(uint64(s.Status)))
	w.Check(enc.EncodeUint(uint64(s.Root)))
	w.Check(enc.EncodeUint(uint64(s.Parent)))
	w.IDs(s.Children)
	w.IDs(s.Siblings)
	w.IDs(s.Peers)
	w.IDs(s.Targets)
	w.Check(enc.EncodeInt(int64(s.NextTarget)))
	w.Check(enc.EncodeUint(uint64(s.PendingRoot)))
	return w.Err()
}
