package snapshot

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"

	"github.com/klauspost/compress/zstd"
)

// hostileSeeds are inputs every decoder must turn into a clean error.
func hostileSeeds(t testing.TB) [][]byte {
	bomb := func() []byte {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		frame := enc.EncodeAll(make([]byte, 64<<20), nil) // 64 MiB of zeros in a few KiB
		body, err := encodeResponse(Response{Gather: 1, CR: 1, CN: 1, Encoding: EncodingZstd, Hash: 1, RawLen: 100, State: frame})
		if err != nil {
			t.Fatal(err)
		}
		return body
	}
	be32 := func(prefix byte) []byte { return []byte{prefix, 0xff, 0xff, 0xff, 0xff} }
	valid, err := encodeResponse(Response{Gather: 7, CR: 3, CN: 4, Encoding: EncodingRaw, Hash: hashOf([]byte("abc")), RawLen: 3, State: []byte("abc"),
		Channels: []ChannelRecord{{From: 1, Flags: FlagComplete, Msgs: []Recorded{{CN: 2, Type: "t.X", Body: []byte{0x80}}}}, {From: 2}}, Peers: []node.ID{2, 9}})
	if err != nil {
		t.Fatal(err)
	}
	return [][]byte{
		{0xdd, 0xff, 0xff, 0xff, 0xff}, // array32 of 4 G elements
		be32(0xdb),                     // str32
		be32(0xc6),                     // bin32
		be32(0xdf),                     // map32
		valid[:len(valid)/2],           // truncated
		valid,
		bomb(),
		{},
	}
}

func encodeResponse(r Response) ([]byte, error) { return protoRegistry.EncodeMessage(r) }

// FuzzDecodeResponse feeds hostile bytes to the checkpoint-response decoder
// and then to the capped checkpoint decompressor: errors are fine, panics
// and unbounded allocations are not.
func FuzzDecodeResponse(f *testing.F) {
	for _, s := range hostileSeeds(f) {
		f.Add(s)
	}
	c, err := newCodec(64 << 10)
	if err != nil {
		f.Fatal(err)
	}
	base := bytes.Repeat([]byte("base-checkpoint-"), 16)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeResponse(b, 64<<10)
		if err != nil {
			if !errors.Is(err, ErrBadMessage) {
				t.Fatalf("error does not wrap ErrBadMessage: %v", err)
			}
			return
		}
		out, err := c.decode(&r, base)
		if err != nil {
			if !errors.Is(err, ErrBadMessage) {
				t.Fatalf("error does not wrap ErrBadMessage: %v", err)
			}
			return
		}
		if len(out) > 64<<10 {
			t.Fatalf("decoded %d bytes past the cap", len(out))
		}
	})
}

// Every hostile seed is a clean error, the bomb included, and a valid
// response round-trips.
func TestDecodeResponseHostileInput(t *testing.T) {
	c, err := newCodec(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	seeds := hostileSeeds(t)
	for i, s := range seeds {
		r, err := DecodeResponse(s, 1<<20)
		if i == 5 { // the valid one
			if err != nil {
				t.Fatalf("valid response: %v", err)
			}
			out, err := c.decode(&r, nil)
			if err != nil || string(out) != "abc" || r.Channels[0].Msgs[0].Type != "t.X" || !slices.Equal(r.Peers, []node.ID{2, 9}) {
				t.Fatalf("valid response decoded to %q, %v", out, err)
			}
			continue
		}
		if err == nil {
			_, err = c.decode(&r, nil)
		}
		if !errors.Is(err, ErrBadMessage) {
			t.Errorf("seed %d (%x...): %v, want an error wrapping ErrBadMessage", i, s[:min(len(s), 8)], err)
		}
	}
}

// A response's peers are bounded and ascending: a hostile responder cannot
// make the gatherer keep more than MaxRecordedPeers of them, nor a list
// the liveness search would read twice.
func TestDecodeResponseBadPeers(t *testing.T) {
	many := make([]node.ID, MaxRecordedPeers+1)
	for i := range many {
		many[i] = node.ID(i + 1)
	}
	for _, peers := range [][]node.ID{many, {3, 2}, {2, 2}, {0, 1}} {
		b, err := encodeResponse(Response{Gather: 1, CR: 1, CN: 1, Encoding: EncodingRaw, RawLen: 0, Peers: peers})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeResponse(b, 1<<20); !errors.Is(err, ErrBadMessage) {
			t.Errorf("peers %v: %v, want an error wrapping ErrBadMessage", peers[:min(len(peers), 4)], err)
		}
	}
}
