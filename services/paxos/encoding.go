package paxos

import (
	"github.com/vmihailenco/msgpack/v5"

	"github.com/seed6eee2ec7/crystalball/node"
)

// stateFields is the number of exported fields of State, i.e. the length of
// its msgpack array.
const stateFields = 14

// EncodeMsgpack implements msgpack.CustomEncoder. It writes exactly what
// msgpack's reflection writes for State's as_array layout with compact
// integers (a test holds it to that), so decoding needs no custom code; it
// exists because the explorer encodes a node state for every state it
// visits, and reflection over the nested ballots and tallies costs several
// times more.
func (s *State) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := node.StateWriter{Enc: enc}
	w.Check(enc.EncodeArrayLen(stateFields))
	writeBallot(&w, s.Promised)
	writeBallot(&w, s.Accepted)
	w.Check(enc.EncodeString(s.AcceptedValue))
	w.Check(enc.EncodeString(s.Learned))
	w.Check(enc.EncodeUint(s.Round))
	w.Check(enc.EncodeString(s.Proposal))
	w.Check(enc.EncodeUint(uint64(s.Phase)))
	writeBallot(&w, s.Ballot)
	w.IDs(s.Promises)
	writeBallot(&w, s.Highest)
	w.Check(enc.EncodeString(s.HighestValue))
	writeBallot(&w, s.Last)
	w.Check(enc.EncodeString(s.LastValue))
	if s.Tallies == nil {
		w.Check(enc.EncodeNil())
		return w.Err()
	}
	w.Check(enc.EncodeArrayLen(len(s.Tallies)))
	for _, t := range s.Tallies {
		w.Check(enc.EncodeArrayLen(3))
		writeBallot(&w, t.Ballot)
		w.Check(enc.EncodeString(t.Value))
		w.IDs(t.From)
	}
	return w.Err()
}

// ballot writes a Ballot as reflection writes its as_array layout.
func writeBallot(w *node.StateWriter, b Ballot) {
	w.Check(w.Enc.EncodeArrayLen(2))
	w.Check(w.Enc.EncodeUint(b.Round))
	w.Check(w.Enc.EncodeUint(uint64(b.Node)))
}
