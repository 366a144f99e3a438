package node

import (
	"bytes"
	"errors"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// slices is a state whose hand-written encoding must equal reflection's.
type slicesState struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	IDs      []ID
	Words    []uint64
	Blocks   []uint32
}

type handEncoded slicesState

func (s *handEncoded) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := StateWriter{Enc: enc}
	w.Check(enc.EncodeArrayLen(3))
	w.IDs(s.IDs)
	w.Uint64s(s.Words)
	w.Uint32s(s.Blocks)
	return w.Err()
}

// TestStateWriterMatchesReflection: nil, empty and full slices, with values
// in every compact-integer width, encode as reflection encodes them.
func TestStateWriterMatchesReflection(t *testing.T) {
	for _, s := range []slicesState{
		{},
		{IDs: []ID{}, Words: []uint64{}, Blocks: []uint32{}},
		{IDs: []ID{1, 200, 70000, 1 << 40}, Words: []uint64{0, 127, 128, 1 << 63}, Blocks: []uint32{5, 1 << 20}},
	} {
		var want, got bytes.Buffer
		for _, c := range []struct {
			buf *bytes.Buffer
			v   any
		}{{&want, &s}, {&got, (*handEncoded)(&s)}} {
			enc := msgpack.NewEncoder(c.buf)
			enc.UseCompactInts(true)
			if err := enc.Encode(c.v); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(want.Bytes(), got.Bytes()) {
			t.Errorf("%+v: hand-written % x, reflection % x", s, got.Bytes(), want.Bytes())
		}
	}
}

func TestStateWriterKeepsTheFirstError(t *testing.T) {
	first, second := errors.New("first"), errors.New("second")
	w := StateWriter{}
	w.Check(nil)
	w.Check(first)
	w.Check(second)
	if !errors.Is(w.Err(), first) {
		t.Fatalf("Err = %v, want the first", w.Err())
	}
}
