package bullet

import (
	"github.com/vmihailenco/msgpack/v5"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The lengths of the msgpack arrays of State, SenderLink and ReceiverLink:
// their numbers of exported fields.
const (
	stateFields    = 10
	senderFields   = 5
	receiverFields = 4
)

// EncodeMsgpack implements msgpack.CustomEncoder. It writes exactly what
// msgpack's reflection would write for State's as_array layout with compact
// integers (a test holds it to that), so decoding needs no custom code; it
// exists because snapshots checkpoint and the explorer hashes a node state
// of a dozen file maps for every state, and reflection per bitmap word
// costs several times this.
func (s *State) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := node.StateWriter{Enc: enc}
	w.Check(enc.EncodeArrayLen(stateFields))
	w.Check(enc.EncodeUint(uint64(s.Source)))
	w.Check(enc.EncodeInt(s.Started))
	w.Check(enc.EncodeInt(s.Completed))
	w.Uint64s(s.Have)
	w.IDs(s.Known)
	w.IDs(s.Members)
	w.IDs(s.PushTargets)
	w.Check(enc.EncodeUint(uint64(s.NextPush)))
	if s.Senders == nil {
		w.Check(enc.EncodeNil())
	} else {
		w.Check(enc.EncodeArrayLen(len(s.Senders)))
		for i := range s.Senders {
			l := &s.Senders[i]
			w.Check(enc.EncodeArrayLen(senderFields))
			w.Check(enc.EncodeUint(uint64(l.ID)))
			w.Check(enc.EncodeBool(l.Accepted))
			w.Uint64s(l.View)
			w.Check(enc.EncodeUint(uint64(l.Received)))
			w.Uint32s(l.Asked)
		}
	}
	if s.Receivers == nil {
		w.Check(enc.EncodeNil())
	} else {
		w.Check(enc.EncodeArrayLen(len(s.Receivers)))
		for i := range s.Receivers {
			l := &s.Receivers[i]
			w.Check(enc.EncodeArrayLen(receiverFields))
			w.Check(enc.EncodeUint(uint64(l.ID)))
			w.Uint64s(l.Shadow)
			w.Uint64s(l.Told)
			w.Check(enc.EncodeUint(uint64(l.Sent)))
		}
	}
	return w.Err()
}
