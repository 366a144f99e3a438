package live

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
)

// hostileBodies are msgpack headers that declare huge lengths: a decoder
// that trusts them allocates gigabytes (msgpack/v5 v5.4.0-v5.4.1 does for
// the array32 one).
var hostileBodies = [][]byte{
	{0xdd, 0xff, 0xff, 0xff, 0xff}, // array32, 4 Gi elements
	{0xdb, 0xff, 0xff, 0xff, 0xff}, // str32, 4 GiB
	{0xc6, 0xff, 0xff, 0xff, 0xff}, // bin32, 4 GiB
	{0xdf, 0xff, 0xff, 0xff, 0xff}, // map32, 4 Gi pairs
}

// frameSeeds are the fuzz corpus seeds and the inputs of
// TestReadFrameHostileInputs.
func frameSeeds(t testing.TB) [][]byte {
	r := testRegistry(t)
	good, err := r.AppendEnvelope(nil, node.Envelope{From: 2, To: 1, CN: 3, Msg: joinMsg{Joiner: 2, Siblings: []node.ID{5}}})
	if err != nil {
		t.Fatal(err)
	}
	goodFrame := AppendFrame(nil, good)
	seeds := [][]byte{
		goodFrame,
		goodFrame[:3],                        // truncated header
		goodFrame[:node.FrameHeaderLen],      // header only
		goodFrame[:len(goodFrame)-1],         // truncated payload
		{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, // 4 GiB length prefix
		binary.BigEndian.AppendUint32(nil, MaxFrameSizeLimit+1),                                  // just over any limit
		{0, 0, 0, 0, 0, 0, 0, 0},                                                                 // empty frame
		append(append([]byte{}, goodFrame[:len(goodFrame)-1]...), goodFrame[len(goodFrame)-1]^1), // bad checksum
		AppendFrame(nil, []byte{0xdd, 0xff, 0xff, 0xff, 0xff}),                                   // the array32 bomb as a payload
	}
	for _, body := range hostileBodies {
		seeds = append(seeds, AppendFrame(nil, body), AppendFrame(nil, envelopeWithBody(body)))
	}
	return append(seeds, append(goodFrame, goodFrame...))
}

// TestReadFrameHostileInputs: every hostile seed is a clean error, not a
// panic or an allocation the length prefix asked for.
func TestReadFrameHostileInputs(t *testing.T) {
	r := testRegistry(t)
	for i, in := range frameSeeds(t) {
		payload, err := ReadFrame(bytes.NewReader(in), nil, 4096)
		if err != nil {
			if !errors.Is(err, ErrBadFrame) && err != io.EOF {
				t.Errorf("seed %d: error %v does not wrap ErrBadFrame", i, err)
			}
			continue
		}
		if _, err := r.DecodeEnvelope(payload); err != nil {
			if !errors.Is(err, node.ErrBadEnvelope) && !errors.Is(err, node.ErrUnknownMessageType) {
				t.Errorf("seed %d: envelope error %v wraps neither node.ErrBadEnvelope nor node.ErrUnknownMessageType", i, err)
			}
		}
	}
}

func TestReadFrameErrors(t *testing.T) {
	payload := []byte("hello, frame")
	f := AppendFrame(nil, payload)
	got, err := ReadFrame(bytes.NewReader(f), nil, 64)
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("round trip: %q, %v", got, err)
	}
	if _, err := ReadFrame(bytes.NewReader(nil), nil, 64); err != io.EOF {
		t.Errorf("empty stream: %v, want io.EOF", err)
	}
	if _, err := ReadFrame(bytes.NewReader(f), nil, len(payload)-1); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("over max: %v", err)
	}
	if _, err := ReadFrame(bytes.NewReader(f[:len(f)-2]), nil, 64); !errors.Is(err, ErrFrameTruncated) {
		t.Errorf("truncated: %v", err)
	}
	bad := bytes.Clone(f)
	bad[len(bad)-1] ^= 0x80
	if _, err := ReadFrame(bytes.NewReader(bad), nil, 64); !errors.Is(err, ErrFrameChecksum) {
		t.Errorf("corrupt: %v", err)
	}
	// The buffer is reused when it is large enough.
	buf := make([]byte, 0, 64)
	got, _ = ReadFrame(bytes.NewReader(f), buf, 64)
	if &got[0] != &buf[:1][0] {
		t.Error("buffer not reused")
	}
}

// TestReadFrameDoesNotAllocateForLengthPrefix: a 4 GiB length prefix with
// a generous maximum is refused before anything is allocated.
func TestReadFrameDoesNotAllocateForLengthPrefix(t *testing.T) {
	in := []byte{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		if _, err := ReadFrame(bytes.NewReader(in), nil, MaxFrameSizeLimit); !errors.Is(err, ErrFrameTooLarge) {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Errorf("10 refused frames allocated %d bytes", n)
	}
}

// FuzzReadFrame feeds arbitrary streams to the frame reader and what it
// accepts to the envelope decoder: all must fail cleanly, and an
// accepted envelope must re-encode.
func FuzzReadFrame(f *testing.F) {
	for _, s := range frameSeeds(f) {
		f.Add(s)
	}
	r := testRegistry(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		rd := bytes.NewReader(in)
		var buf []byte
		for range 4 {
			payload, err := ReadFrame(rd, buf, 4096)
			if err != nil {
				if !errors.Is(err, ErrBadFrame) && err != io.EOF {
					t.Fatalf("unexpected error class: %v", err)
				}
				return
			}
			if len(payload) == 0 || len(payload) > 4096 {
				t.Fatalf("payload of %d bytes", len(payload))
			}
			buf = payload
			if env, err := r.DecodeEnvelope(payload); err == nil {
				if _, err := r.AppendEnvelope(nil, env); err != nil {
					t.Fatalf("decoded envelope does not re-encode: %v", err)
				}
			} else if !errors.Is(err, node.ErrBadEnvelope) && !errors.Is(err, node.ErrUnknownMessageType) {
				t.Fatalf("envelope error class: %v", err)
			}
		}
	})
}
