package node

import (
	"bytes"
	"errors"
	"testing"
)

type joinMsg struct {
	Joiner   ID
	Siblings []ID
	Tags     map[string]uint32
}

func (joinMsg) MessageType() string { return "test.join" }

func testRegistry(t testing.TB) *Registry {
	t.Helper()
	r, err := NewRegistry(joinMsg{}, note{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestEnvelopeRoundTrip(t *testing.T) {
	r := testRegistry(t)
	in := Envelope{From: 13, To: 1, CN: 42, Msg: joinMsg{Joiner: 13, Siblings: []ID{4, 9}, Tags: map[string]uint32{"b": 2, "a": 1}}}
	b, err := r.AppendEnvelope(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.DecodeEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := r.AppendEnvelope(nil, out)
	if !bytes.Equal(b, b2) || out.From != 13 || out.To != 1 || out.CN != 42 {
		t.Fatalf("round trip: %+v", out)
	}
	if got := out.Msg.(joinMsg); got.Joiner != 13 || len(got.Siblings) != 2 || got.Tags["b"] != 2 {
		t.Fatalf("message = %+v", got)
	}
}

func TestRegistryRejectsBadPrototypes(t *testing.T) {
	if _, err := NewRegistry(note{}, note{}); !errors.Is(err, ErrDuplicateMessageType) {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := NewRegistry(&note{}); err == nil {
		t.Error("pointer prototype accepted")
	}
	if _, err := NewRegistry(nil); err == nil {
		t.Error("nil prototype accepted")
	}
	r := testRegistry(t)
	if _, err := r.AppendEnvelope(nil, Envelope{From: 1, To: 2, Msg: unregistered{}}); !errors.Is(err, ErrUnknownMessageType) {
		t.Errorf("unregistered send: %v", err)
	}
}

type unregistered struct{}

func (unregistered) MessageType() string { return "test.unregistered" }

// hostileEnvelopes are inputs every envelope decoder must reject cleanly;
// they also seed the fuzz corpus.
func hostileEnvelopes(t testing.TB) map[string][]byte {
	r := testRegistry(t)
	good, err := r.AppendEnvelope(nil, Envelope{From: 1, To: 2, CN: 3, Msg: joinMsg{Joiner: 1}})
	if err != nil {
		t.Fatal(err)
	}
	header := func(body ...byte) []byte {
		// From 1, To 2, CN 3, type "test.join"
		return append(append([]byte{envelopeFormatV1, 1, 2, 3, 9}, "test.join"...), body...)
	}
	return map[string][]byte{
		"empty":            {},
		"wrong format":     {0x00, 1, 2, 3},
		"truncated header": good[:3],
		"truncated body":   good[:len(good)-1],
		"trailing byte":    append(append([]byte{}, good...), 0xc0),
		"array32 body":     header(0xdd, 0xff, 0xff, 0xff, 0xff),
		"map32 body":       header(0xdf, 0xff, 0xff, 0xff, 0xff),
		"str32 body":       header(0xdb, 0xff, 0xff, 0xff, 0xff),
		"bin32 body":       header(0xc6, 0xff, 0xff, 0xff, 0xff),
		"ext32 body":       header(0xc9, 0xff, 0xff, 0xff, 0xff, 0x01),
		"nested array16":   header(bytes.Repeat([]byte{0xdc, 0xff, 0xff}, 200)...),
		"deep fixarrays":   header(bytes.Repeat([]byte{0x91}, 200)...),
		"reserved code":    header(0xc1),
		"unknown type":     append([]byte{envelopeFormatV1, 1, 2, 3, 3}, "bad"...),
		"huge name length": {envelopeFormatV1, 1, 2, 3, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"zero sender":      append(append([]byte{envelopeFormatV1, 0, 2, 3, 9}, "test.join"...), 0x80),
		"type mismatch":    header(0xa3, 'a', 'b', 'c'),
	}
}

func TestDecodeEnvelopeRejectsHostileInput(t *testing.T) {
	r := testRegistry(t)
	for name, b := range hostileEnvelopes(t) {
		_, err := r.DecodeEnvelope(b)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if !errors.Is(err, ErrBadEnvelope) && !errors.Is(err, ErrUnknownMessageType) {
			t.Errorf("%s: err = %v, want ErrBadEnvelope or ErrUnknownMessageType", name, err)
		}
	}
}

func TestCheckMsgpack(t *testing.T) {
	ok := [][]byte{
		{0xc0},                   // nil
		{0x92, 0x01, 0x02},       // [1, 2]
		{0x81, 0xa1, 'a', 0x01},  // {"a": 1}
		{0xdc, 0x00, 0x01, 0x7f}, // array16 [127]
		{0xd4, 0x01, 0x02},       // fixext1
	}
	for _, b := range ok {
		if err := CheckMsgpack(b, MaxMsgpackDepth); err != nil {
			t.Errorf("% x: %v", b, err)
		}
	}
	bad := map[string]struct {
		b    []byte
		want error
	}{
		"array32 header":       {[]byte{0xdd, 0xff, 0xff, 0xff, 0xff}, ErrMsgpackOversized},
		"array claims 3 has 2": {[]byte{0x93, 0x01, 0x02}, ErrMsgpackOversized},
		"nested claims exceed": {[]byte{0x92, 0x92, 0x01, 0x01}, ErrMsgpackOversized},
		"str8 past end":        {[]byte{0xd9, 0x05, 'a'}, ErrMsgpackOversized},
		"header cut":           {[]byte{0xcd, 0x01}, ErrMsgpackOversized},
		"empty":                {nil, ErrMsgpackTruncated},
		"length header cut":    {[]byte{0xdc, 0x00}, ErrMsgpackTruncated},
		"too deep":             {append(bytes.Repeat([]byte{0x91}, 70), 0xc0), ErrMsgpackTooDeep},
		"trailing":             {[]byte{0xc0, 0xc0}, ErrMsgpackInvalid},
		"reserved 0xc1":        {[]byte{0xc1}, ErrMsgpackInvalid},
	}
	for name, c := range bad {
		if err := CheckMsgpack(c.b, MaxMsgpackDepth); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", name, err, c.want)
		}
	}
}

// FuzzDecodeEnvelope: no input may panic the decoder, and whatever decodes
// re-encodes to bytes that decode to the same envelope.
func FuzzDecodeEnvelope(f *testing.F) {
	r := testRegistry(f)
	for _, b := range hostileEnvelopes(f) {
		f.Add(b)
	}
	good, _ := r.AppendEnvelope(nil, Envelope{From: 7, To: 9, CN: 1, Msg: joinMsg{Joiner: 7, Siblings: []ID{1, 2}, Tags: map[string]uint32{"x": 1}}})
	f.Add(good)
	dgram, _ := r.AppendEnvelope(nil, Envelope{From: 7, To: 9, CN: 1, Msg: note{"x"}, Datagram: true})
	f.Add(dgram)
	f.Fuzz(func(t *testing.T, b []byte) {
		env, err := r.DecodeEnvelope(b)
		if err != nil {
			return
		}
		again, err := r.AppendEnvelope(nil, env)
		if err != nil {
			t.Fatalf("decoded envelope does not re-encode: %v", err)
		}
		env2, err := r.DecodeEnvelope(again)
		if err != nil {
			t.Fatalf("re-encoded envelope does not decode: %v", err)
		}
		third, _ := r.AppendEnvelope(nil, env2)
		if !bytes.Equal(again, third) {
			t.Fatal("encoding is not stable after one round trip")
		}
	})
}

// FuzzDecodeCheckpoint: no input may panic the checkpoint decoder.
func FuzzDecodeCheckpoint(f *testing.F) {
	st := State{Service: fillMapService(3, []int{2, 0, 1}), Rand: NewRand(1, 1)}
	good, _ := st.AppendCheckpoint(nil)
	f.Add(good)
	f.Add([]byte{checkpointFormatV1, 0, 0, 0, 5, 0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{checkpointFormatV1, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeCheckpoint(b, newMapService)
		if err != nil {
			return
		}
		if _, err := got.AppendCheckpoint(nil); err != nil {
			t.Fatalf("decoded checkpoint does not re-encode: %v", err)
		}
	})
}

// FuzzCheckMsgpack: the structural check never panics, and input it accepts
// can be walked object by object to its end.
func FuzzCheckMsgpack(f *testing.F) {
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0xdb, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0xc6, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0xdf, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0x92, 0x81, 0xa1, 'a', 0x01, 0xc0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if CheckMsgpack(b, MaxMsgpackDepth) != nil {
			return
		}
		end, err := msgpackObjectEnd(b, 0)
		if err != nil || end != len(b) {
			t.Fatalf("accepted input walks to %d of %d (%v)", end, len(b), err)
		}
		if _, err := canonicalMsgpack(nil, b); err != nil {
			t.Fatalf("accepted input does not canonicalise: %v", err)
		}
	})
}
