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
	w := stateWriter{enc: enc}
	w.check(enc.EncodeArrayLen(stateFields))
	w.ballot(s.Promised)
	w.ballot(s.Accepted)
	w.check(enc.EncodeString(s.AcceptedValue))
	w.check(enc.EncodeString(s.Learned))
	w.check(enc.EncodeUint(s.Round))
	w.check(enc.EncodeString(s.Proposal))
	w.check(enc.EncodeUint(uint64(s.Phase)))
	w.ballot(s.Ballot)
	w.ids(s.Promises)
	w.ballot(s.Highest)
	w.check(enc.EncodeString(s.HighestValue))
	w.ballot(s.Last)
	w.check(enc.EncodeString(s.LastValue))
	if s.Tallies == nil {
		w.check(enc.EncodeNil())
		return w.err
	}
	w.check(enc.EncodeArrayLen(len(s.Tallies)))
	for _, t := range s.Tallies {
		w.check(enc.EncodeArrayLen(3))
		w.ballot(t.Ballot)
		w.check(enc.EncodeString(t.Value))
		w.ids(t.From)
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

// ballot writes a Ballot as reflection writes its as_array layout.
func (w *stateWriter) ballot(b Ballot) {
	w.check(w.enc.EncodeArrayLen(2))
	w.check(w.enc.EncodeUint(b.Round))
	w.check(w.enc.EncodeUint(uint64(b.Node)))
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
