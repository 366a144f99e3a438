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
	w := node.StateWriter{Enc: enc}
	w.Check(enc.EncodeArrayLen(stateFields))
	w.Check(enc.EncodeUint(uint64(s.Status)))
	w.Check(enc.EncodeUint(uint64(s.Bootstrap)))
	w.IDs(s.Left)
	w.IDs(s.Right)
	w.IDs(s.Table)
	if s.Misses == nil {
		w.Check(enc.EncodeNil())
		return w.Err()
	}
	w.Check(enc.EncodeArrayLen(len(s.Misses)))
	for _, m := range s.Misses {
		w.Check(enc.EncodeArrayLen(2))
		w.Check(enc.EncodeUint(uint64(m.Peer)))
		w.Check(enc.EncodeInt(int64(m.Count)))
	}
	return w.Err()
}
