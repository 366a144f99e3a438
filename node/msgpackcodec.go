package node

import (
	"bytes"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// codecBuf is a reusable encoder and its output buffer.
type codecBuf struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
}

var codecPool = sync.Pool{New: func() any {
	c := &codecBuf{}
	c.enc = msgpack.NewEncoder(&c.buf)
	// Compact ints make the encoding of a value independent of its Go
	// integer width and keep checkpoints small; both are deterministic.
	c.enc.UseCompactInts(true)
	c.enc.SetSortMapKeys(true)
	return c
}}

// encodeCanonical appends the canonical msgpack encoding of v to dst: compact
// integers, struct fields in declaration order, and the entries of every map
// sorted by encoded key (see canonicalMsgpack).
func encodeCanonical(dst []byte, v any) ([]byte, error) {
	c := codecPool.Get().(*codecBuf)
	defer codecPool.Put(c)
	c.buf.Reset()
	if err := c.enc.Encode(v); err != nil {
		return nil, err
	}
	return canonicalMsgpack(dst, c.buf.Bytes())
}

// unmarshalMsgpack decodes b into v. Callers check untrusted input with
// CheckMsgpack first.
func unmarshalMsgpack(b []byte, v any) error {
	return msgpack.Unmarshal(b, v)
}
