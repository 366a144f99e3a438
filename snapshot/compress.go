package snapshot

import (
	"bytes"
	"fmt"

	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/xxh3"
)

// hashOf is the checkpoint digest used to name delta bases.
func hashOf(b []byte) uint64 {
	h := xxh3.Hash(b)
	if h == 0 {
		h = 1 // 0 means "no base" on the wire
	}
	return h
}

// dictID derives the zstd dictionary ID of a base from its hash (never 0).
func dictID(base uint64) uint32 { return uint32(base>>32) | 1 }

// codec holds one zstd encoder and one decoder, reused for every checkpoint
// (the dictionary is swapped per call). It is owned by one Manager and is
// not safe for concurrent use; neither the encoder nor the decoder starts a
// goroutine (concurrency 1, whole-buffer calls only).
type codec struct {
	enc     *zstd.Encoder
	dec     *zstd.Decoder
	maxSize int
	encDict bool
}

func newCodec(maxSize int) (*codec, error) {
	enc, err := zstd.NewWriter(nil,
		zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(false),
		zstd.WithLowerEncoderMem(true),
		zstd.WithWindowSize(windowFor(maxSize)),
		zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		return nil, fmt.Errorf("snapshot: zstd encoder: %w", err)
	}
	dec, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(uint64(maxSize)),
		zstd.WithDecoderMaxWindow(uint64(windowFor(maxSize))),
		zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		return nil, fmt.Errorf("snapshot: zstd decoder: %w", err)
	}
	return &codec{enc: enc, dec: dec, maxSize: maxSize}, nil
}

// windowFor returns the smallest valid zstd window (a power of two, at
// least zstd.MinWindowSize) covering n bytes, capped at 8 MiB.
func windowFor(n int) int {
	w := zstd.MinWindowSize
	for w < n && w < 8<<20 {
		w <<= 1
	}
	return w
}

// compress appends a zstd frame of raw to dst, with base as a raw
// dictionary when base is non-nil.
func (c *codec) compress(dst, raw, base []byte) ([]byte, error) {
	var err error
	switch {
	case base != nil:
		err = c.enc.ResetWithOptions(nil, zstd.WithEncoderDictRaw(dictID(hashOf(base)), base))
		c.encDict = true
	case c.encDict:
		err = c.enc.ResetWithOptions(nil, zstd.WithEncoderDictDelete())
		c.encDict = false
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot: zstd encoder: %w", err)
	}
	return c.enc.EncodeAll(raw, dst), nil
}

// decode returns the raw checkpoint a Response carries. base is the
// checkpoint the response names as its base (nil if the receiver does not
// have it). The output is freshly allocated (or base itself for
// EncodingSame), at most maxSize bytes whatever the payload declares, and
// must hash to r.Hash. Errors wrap ErrBadMessage.
func (c *codec) decode(r *Response, base []byte) ([]byte, error) {
	if int64(r.RawLen) > int64(c.maxSize) {
		return badPayload("%d bytes exceeds the %d-byte cap", r.RawLen, c.maxSize)
	}
	out, err := c.decodeState(r, base)
	if err != nil {
		return nil, err
	}
	if len(out) != int(r.RawLen) || hashOf(out) != r.Hash {
		return badPayload("decoded %d bytes that do not match the declared length %d and hash", len(out), r.RawLen)
	}
	return out, nil
}

// badPayload is the error about an undecodable checkpoint payload, wrapping
// ErrBadMessage.
func badPayload(format string, args ...any) ([]byte, error) {
	return nil, fmt.Errorf("%w: checkpoint payload: "+format, append([]any{ErrBadMessage}, args...)...)
}

// isBase reports whether base is present and is the checkpoint with hash h.
func isBase(base []byte, h uint64) bool { return base != nil && hashOf(base) == h }

// decodeState undoes r's encoding, unchecked against the declared length
// and hash.
func (c *codec) decodeState(r *Response, base []byte) ([]byte, error) {
	switch r.Encoding {
	case EncodingRaw:
		return bytes.Clone(r.State), nil
	case EncodingSame:
		if !isBase(base, r.Base) {
			return badPayload("unchanged against an unknown base")
		}
		return base, nil
	case EncodingZstd, EncodingDelta:
		return c.inflate(r, base)
	}
	return badPayload("unknown encoding %d", r.Encoding)
}

// inflate decompresses r's zstd frame, with base as the raw dictionary of
// a delta.
func (c *codec) inflate(r *Response, base []byte) ([]byte, error) {
	opts := []zstd.DOption{zstd.WithDecoderDictDelete()}
	if r.Encoding == EncodingDelta {
		if !isBase(base, r.Base) {
			return badPayload("delta against an unknown base")
		}
		opts = append(opts, zstd.WithDecoderDictRaw(dictID(r.Base), base))
	}
	if err := c.dec.ResetWithOptions(nil, opts...); err != nil {
		return badPayload("%v", err)
	}
	out, err := c.dec.DecodeAll(r.State, make([]byte, 0, r.RawLen))
	if err != nil {
		return badPayload("%v", err)
	}
	return out, nil
}
