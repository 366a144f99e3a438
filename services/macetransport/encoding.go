package macetransport

import (
	"github.com/vmihailenco/msgpack/v5"

	"github.com/seed6eee2ec7/crystalball/node"
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
	w := node.StateWriter{Enc: enc}
	w.Check(enc.EncodeArrayLen(stateFields))
	w.Check(enc.EncodeUint(s.Opened))
	w.Check(enc.EncodeUint(s.LastConn))
	w.Check(enc.EncodeUint(s.NextMsg))
	w.Check(enc.EncodeUint(s.Failures))
	w.Check(enc.EncodeUint(uint64(s.AppPeer)))
	if s.Out == nil {
		w.Check(enc.EncodeNil())
	} else {
		w.Check(enc.EncodeArrayLen(len(s.Out)))
		for i := range s.Out {
			writeOut(&w, &s.Out[i])
		}
	}
	if s.In == nil {
		w.Check(enc.EncodeNil())
	} else {
		w.Check(enc.EncodeArrayLen(len(s.In)))
		for i := range s.In {
			writeIn(&w, &s.In[i])
		}
	}
	return w.Err()
}

// writeOut writes an OutConn as reflection writes its as_array layout.
func writeOut(w *node.StateWriter, c *OutConn) {
	w.Check(w.Enc.EncodeArrayLen(outFields))
	w.Check(w.Enc.EncodeUint(uint64(c.Peer)))
	w.Check(w.Enc.EncodeUint(c.ISN))
	w.Check(w.Enc.EncodeUint(c.Conn))
	w.Check(w.Enc.EncodeBool(c.Established))
	w.Check(w.Enc.EncodeUint(c.Base))
	w.Check(w.Enc.EncodeUint(c.Sent))
	w.Check(w.Enc.EncodeInt(int64(c.Retries)))
	w.Uint64s(c.Queue)
}

// writeIn writes an InConn as reflection writes its as_array layout.
func writeIn(w *node.StateWriter, c *InConn) {
	w.Check(w.Enc.EncodeArrayLen(inFields))
	w.Check(w.Enc.EncodeUint(uint64(c.Peer)))
	w.Check(w.Enc.EncodeUint(c.ISN))
	w.Check(w.Enc.EncodeUint(c.Conn))
	w.Check(w.Enc.EncodeUint(c.Next))
	w.Check(w.Enc.EncodeUint(c.Total))
	w.Uint64s(c.Delivered)
}
