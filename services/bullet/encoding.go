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
	w := stateWriter{enc: enc}
	w.check(enc.EncodeArrayLen(stateFields))
	w.check(enc.EncodeUint(uint64(s.Source)))
	w.check(enc.EncodeInt(s.Started))
	w.check(enc.EncodeInt(s.Completed))
	w.words(s.Have)
	w.ids(s.Known)
	w.ids(s.Members)
	w.ids(s.PushTargets)
	w.check(enc.EncodeUint(uint64(s.NextPush)))
	if s.Senders == nil {
		w.check(enc.EncodeNil())
	} else {
		w.check(enc.EncodeArrayLen(len(s.Senders)))
		for i := range s.Senders {
			l := &s.Senders[i]
			w.check(enc.EncodeArrayLen(senderFields))
			w.check(enc.EncodeUint(uint64(l.ID)))
			w.check(enc.EncodeBool(l.Accepted))
			w.words(l.View)
			w.check(enc.EncodeUint(uint64(l.Received)))
			w.blocks(l.Asked)
		}
	}
	if s.Receivers == nil {
		w.check(enc.EncodeNil())
	} else {
		w.check(enc.EncodeArrayLen(len(s.Receivers)))
		for i := range s.Receivers {
			l := &s.Receivers[i]
			w.check(enc.EncodeArrayLen(receiverFields))
			w.check(enc.EncodeUint(uint64(l.ID)))
			w.words(l.Shadow)
			w.words(l.Told)
			w.check(enc.EncodeUint(uint64(l.Sent)))
		}
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

// ids, words and blocks write a slice as reflection does: nil as msgpack
// nil, else an array of compact unsigned integers.
func (w *stateWriter) ids(s []node.ID) {
	if s == nil {
		w.check(w.enc.EncodeNil())
		return
	}
	w.check(w.enc.EncodeArrayLen(len(s)))
	for _, v := range s {
		w.check(w.enc.EncodeUint(uint64(v)))
	}
}

func (w *stateWriter) words(s []uint64) {
	if s == nil {
		w.check(w.enc.EncodeNil())
		return
	}
	w.check(w.enc.EncodeArrayLen(len(s)))
	for _, v := range s {
		w.check(w.enc.EncodeUint(v))
	}
}

func (w *stateWriter) blocks(s []uint32) {
	if s == nil {
		w.check(w.enc.EncodeNil())
		return
	}
	w.check(w.enc.EncodeArrayLen(len(s)))
	for _, v := range s {
		w.check(w.enc.EncodeUint(uint64(v)))
	}
}
