package live

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Frames are how the live runtime delimits messages on a TCP connection:
//
//	uint32 length (big endian) | uint32 CRC-32C of the payload | payload
//
// (node.FrameHeaderLen bytes of header). The length counts payload bytes
// only. A reader checks it against its maximum frame size before it
// allocates or reads the payload, and checks the checksum before anything
// decodes the payload, so a hostile or corrupted stream costs at most one
// maximum-size buffer and never reaches a decoder.

// Framing limits.
const (
	// MinFrameSize is the smallest maximum frame size a runtime accepts:
	// room for a handshake and a small envelope.
	MinFrameSize = 512
	// DefaultMaxFrameSize is the default maximum payload size (1 MiB).
	DefaultMaxFrameSize = 1 << 20
	// MaxFrameSizeLimit is the largest maximum frame size a runtime
	// accepts (64 MiB): a length prefix can never ask for more.
	MaxFrameSizeLimit = 64 << 20
)

// Frame errors. ReadFrame returns io.EOF for a stream that ends cleanly
// between frames; every other failure wraps ErrBadFrame.
var (
	// ErrBadFrame is wrapped by every framing error.
	ErrBadFrame = errors.New("live: bad frame")
	// ErrFrameTooLarge: the length prefix exceeds the maximum frame size.
	ErrFrameTooLarge = fmt.Errorf("%w: length exceeds maximum frame size", ErrBadFrame)
	// ErrFrameChecksum: the payload does not match its CRC-32C.
	ErrFrameChecksum = fmt.Errorf("%w: checksum mismatch", ErrBadFrame)
	// ErrFrameTruncated: the stream ended inside a frame.
	ErrFrameTruncated = fmt.Errorf("%w: truncated", ErrBadFrame)
	// ErrFrameEmpty: a frame with no payload (no valid frame is empty).
	ErrFrameEmpty = fmt.Errorf("%w: empty payload", ErrBadFrame)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// AppendFrame appends a frame holding payload to dst and returns the
// extended slice. It does not check payload against a maximum; writers
// check with the same limit their peers read with.
func AppendFrame(dst, payload []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(payload)))
	dst = binary.BigEndian.AppendUint32(dst, crc32.Checksum(payload, castagnoli))
	return append(dst, payload...)
}

// BeginFrame reserves a frame header at the end of dst; FinishFrame fills it
// in once the payload has been appended after it. Together they let an
// encoder append straight into the frame buffer.
func BeginFrame(dst []byte) (out []byte, start int) {
	start = len(dst)
	return append(dst, make([]byte, node.FrameHeaderLen)...), start
}

// FinishFrame writes the header of the frame that BeginFrame reserved at
// start, covering everything appended to frame after that header.
func FinishFrame(frame []byte, start int) {
	payload := frame[start+node.FrameHeaderLen:]
	binary.BigEndian.PutUint32(frame[start:], uint32(len(payload)))
	binary.BigEndian.PutUint32(frame[start+4:], crc32.Checksum(payload, castagnoli))
}

// ReadFrame reads one frame from r and returns its payload. maxSize bounds
// the payload length and is checked before any allocation; buf is reused
// for the payload when it is large enough, so the result aliases buf and is
// valid until the caller reuses buf. A clean end of stream before the first
// header byte is io.EOF; anything else that goes wrong wraps ErrBadFrame
// (I/O errors other than EOF are returned as they are).
func ReadFrame(r io.Reader, buf []byte, maxSize int) ([]byte, error) {
	var hdr [node.FrameHeaderLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, truncatedIf(err, io.ErrUnexpectedEOF)
	}
	n := binary.BigEndian.Uint32(hdr[:4])
	sum := binary.BigEndian.Uint32(hdr[4:])
	if err := checkFrameLen(n, maxSize); err != nil {
		return nil, err
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, truncatedIf(err, io.EOF, io.ErrUnexpectedEOF)
	}
	if crc32.Checksum(buf, castagnoli) != sum {
		return nil, ErrFrameChecksum
	}
	return buf, nil
}

// checkFrameLen checks a frame's length prefix n before anything is
// allocated for it: no valid frame is empty, nor larger than maxSize.
func checkFrameLen(n uint32, maxSize int) error {
	if n == 0 {
		return ErrFrameEmpty
	}
	if maxSize < 0 || uint64(n) > uint64(maxSize) {
		return fmt.Errorf("%w (%d > %d bytes)", ErrFrameTooLarge, n, maxSize)
	}
	return nil
}

// truncatedIf returns ErrFrameTruncated when the read error err says the
// stream ended inside a frame (one of ends), else err.
func truncatedIf(err error, ends ...error) error {
	if isAnyOf(err, ends...) {
		return ErrFrameTruncated
	}
	return err
}
