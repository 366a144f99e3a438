package macetransport

import (
	"github.com/vmihailenco/msgpack/v5"
)

// stateFields, outFields and inFields are the numbers of exported fields of
// State, OutConn and InConn, i.e. the lengths of their msgpack arrays.
const (
	stateFields = 7
	outFields   = 8
	inFields    = 6
)

// EncodeMsgpack implements msgpack.CustomEncoder. It writes exactly what
// msgpack's reflection would write for State's as_array layout with compact
// integers (a test holds it to that), so decoding needs no custom code; it
// exists because the explorer encodes a node state for every state it
// visits, and reflection walks the nested connections and their queues
// field by field.
func (s *State) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := stateWriter{enc: enc}
	w.check(enc.EncodeArrayLen(stateFields))
	w.check(enc.EncodeUint(s.Opened))
	w.check(enc.EncodeUint(s.LastConn))
	w.check(enc.EncodeUint(s.NextMsg))
	w.check(enc.EncodeUint(s.Failures))
	w.check(enc.EncodeUint(uint64(s.AppPeer)))
	if s.Out == nil {
		w.check(enc.EncodeNil())
	} else {
		w.check(enc.EncodeArrayLen(len(s.Out)))
		for i := range s.Out {
			w.out(&s.Out[i])
		}
	}
	if s.In == nil {
		w.check(enc.EncodeNil())
	} else {
		w.check(enc.EncodeArrayLen(len(s.In)))
		for i := range s.In {
			w.in(&s.In[i])
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

func (w *stateWriter) out(c *OutConn) {
	w.check(w.enc.EncodeArrayLen(outFields))
	w.check(w.enc.EncodeUint(uint64(c.Peer)))
	w.check(w.enc.EncodeUint(c.ISN))
	w.check(w.enc.EncodeUint(c.Conn))
	w.check(w.enc.EncodeBool(c.Established))
	w.check(w.enc.EncodeUint(c.Base))
	w.check(w.enc.EncodeUint(c.Sent))
	w.check(w.enc.EncodeInt(int64(c.Retries)))
	w.msgs(c.Queue)
}

func (w *stateWriter) in(c *InConn) {
	w.check(w.enc.EncodeArrayLen(inFields))
	w.check(w.enc.EncodeUint(uint64(c.Peer)))
	w.check(w.enc.EncodeUint(c.ISN))
	w.check(w.enc.EncodeUint(c.Conn))
	w.check(w.enc.EncodeUint(c.Next))
	w.check(w.enc.EncodeUint(c.Total))
	w.msgs(c.Delivered)
}

// msgs writes message identifiers as reflection writes a []uint64: nil as
// msgpack nil.
func (w *stateWriter) msgs(ms []uint64) {
	if ms == nil {
		w.check(w.enc.EncodeNil())
		return
	}
	w.check(w.enc.EncodeArrayLen(len(ms)))
	for _, m := range ms {
		w.check(w.enc.EncodeUint(m))
	}
}
