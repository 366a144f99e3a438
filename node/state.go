package node

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/zeebo/xxh3"
)

// Timer is a scheduled timer of a node: its name and deadline.
type Timer struct {
	Name string
	At   time.Time
}

// MaxTimerNameLen bounds timer names, so a decoded checkpoint cannot declare
// an unbounded one.
const MaxTimerNameLen = 255

// State is everything a node is: the service state, the scheduled timers and
// the random source. It is a value; Clone makes an independent copy.
//
// Two encodings exist. The checkpoint encoding (AppendCheckpoint) is complete
// and restores the node exactly, deadlines included. The fingerprint encoding
// (AppendFingerprint) leaves out timer deadlines: for the explorer two states
// that differ only in when a timer will fire are the same state, because
// exploration may fire any scheduled timer next. Both are canonical: equal
// states give equal bytes whatever Go's map iteration order was.
type State struct {
	Service Service
	// Timers are kept sorted by name, one entry per name.
	Timers []Timer
	Rand   Rand
}

// Hash is a 128-bit state fingerprint (xxh3-128 of the fingerprint encoding).
type Hash struct{ Hi, Lo uint64 }

// String renders the hash as 32 hex digits.
func (h Hash) String() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], h.Hi)
	binary.BigEndian.PutUint64(b[8:], h.Lo)
	return hex.EncodeToString(b[:])
}

// Encoding tags: the first byte of each encoding, so one is never mistaken
// for the other and the format can evolve.
const (
	checkpointFormatV1  = 0xC1
	fingerprintFormatV1 = 0xF1
)

// ErrBadCheckpoint is wrapped by every checkpoint decoding error.
var ErrBadCheckpoint = errors.New("node: bad checkpoint")

// AppendCheckpoint appends the complete canonical encoding of s to dst.
func (s *State) AppendCheckpoint(dst []byte) ([]byte, error) {
	return s.appendEncoding(dst, true)
}

// AppendFingerprint appends the canonical encoding of s without timer
// deadlines (see State). A service that implements Fingerprinter
// contributes its own fingerprint encoding instead of its state's.
func (s *State) AppendFingerprint(dst []byte) ([]byte, error) {
	return s.appendEncoding(dst, false)
}

func (s *State) appendEncoding(dst []byte, deadlines bool) ([]byte, error) {
	tag := byte(fingerprintFormatV1)
	if deadlines {
		tag = checkpointFormatV1
	}
	dst = append(dst, tag)
	// Reserve a fixed 4-byte length for the service body so it can be
	// written in place, without a second buffer.
	lenAt := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	var err error
	if s.Service == nil {
		return nil, errors.New("node: state has no service")
	}
	if f, ok := s.Service.(Fingerprinter); ok && !deadlines {
		dst, err = f.AppendFingerprint(dst)
	} else {
		dst, err = encodeCanonical(dst, s.Service)
	}
	if err != nil {
		return nil, fmt.Errorf("node: encoding service state: %w", err)
	}
	binary.BigEndian.PutUint32(dst[lenAt:], uint32(len(dst)-lenAt-4))
	dst = binary.AppendUvarint(dst, uint64(len(s.Timers)))
	for _, t := range s.Timers {
		dst = binary.AppendUvarint(dst, uint64(len(t.Name)))
		dst = append(dst, t.Name...)
		if deadlines {
			dst = binary.AppendVarint(dst, t.At.UnixNano())
		}
	}
	return s.Rand.appendState(dst), nil
}

// hashBufPool recycles fingerprint buffers: Hash runs on every explored
// state and should not allocate.
var hashBufPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// Hash returns the state's fingerprint hash. It is safe to call concurrently
// on different states.
func (s *State) Hash() (Hash, error) {
	bp := hashBufPool.Get().(*[]byte)
	defer hashBufPool.Put(bp)
	b, err := s.AppendFingerprint((*bp)[:0])
	if err != nil {
		return Hash{}, err
	}
	*bp = b[:0]
	h := xxh3.Hash128(b)
	return Hash{Hi: h.Hi, Lo: h.Lo}, nil
}

// DecodeCheckpoint rebuilds a State from a checkpoint encoding. b is
// untrusted: every length is checked against the remaining input before use,
// so malformed bytes give an error wrapping ErrBadCheckpoint, never a panic
// or an allocation beyond O(len(b)). factory supplies the service value
// (with its configuration) that the state is decoded into. The result does
// not alias b.
func DecodeCheckpoint(b []byte, factory Factory) (State, error) {
	bad := func(format string, args ...any) (State, error) {
		return State{}, fmt.Errorf("%w: "+format, append([]any{ErrBadCheckpoint}, args...)...)
	}
	if len(b) < 5 || b[0] != checkpointFormatV1 {
		return bad("missing header")
	}
	n := int(binary.BigEndian.Uint32(b[1:5]))
	rest := b[5:]
	if n < 0 || n > len(rest) {
		return bad("service body of %d bytes, %d remain", n, len(rest))
	}
	body := rest[:n]
	rest = rest[n:]
	if err := CheckMsgpack(body, MaxMsgpackDepth); err != nil {
		return bad("service body: %v", err)
	}
	svc := factory()
	if svc == nil {
		return State{}, errors.New("node: factory returned nil service")
	}
	if err := unmarshalMsgpack(body, svc); err != nil {
		return bad("service body: %v", err)
	}
	count, k := binary.Uvarint(rest)
	if k <= 0 || count > uint64(len(rest)) {
		return bad("timer count")
	}
	rest = rest[k:]
	timers := make([]Timer, 0, count)
	for i := uint64(0); i < count; i++ {
		l, k := binary.Uvarint(rest)
		if k <= 0 || l > MaxTimerNameLen || l > uint64(len(rest)-k) {
			return bad("timer %d name", i)
		}
		name := string(rest[k : k+int(l)])
		rest = rest[k+int(l):]
		at, k2 := binary.Varint(rest)
		if k2 <= 0 {
			return bad("timer %q deadline", name)
		}
		rest = rest[k2:]
		if len(timers) > 0 && timers[len(timers)-1].Name >= name {
			return bad("timers not sorted by name")
		}
		timers = append(timers, Timer{Name: name, At: time.Unix(0, at).UTC()})
	}
	if len(rest) != randStateLen {
		return bad("random source state of %d bytes", len(rest))
	}
	st := State{Service: svc, Timers: timers}
	if err := st.Rand.setState(rest); err != nil {
		return bad("random source state: %v", err)
	}
	return st, nil
}

// Clone returns a deep copy of s that shares no mutable memory with it. It
// uses the service's Cloner when there is one and a checkpoint round trip
// otherwise (factory is needed only then).
func (s *State) Clone(factory Factory) (State, error) {
	out := State{Rand: s.Rand}
	if len(s.Timers) > 0 {
		out.Timers = append(make([]Timer, 0, len(s.Timers)), s.Timers...)
	}
	if c, ok := s.Service.(Cloner); ok {
		out.Service = c.Clone()
		return out, nil
	}
	body, err := encodeCanonical(nil, s.Service)
	if err != nil {
		return State{}, fmt.Errorf("node: cloning service state: %w", err)
	}
	svc := factory()
	if err := unmarshalMsgpack(body, svc); err != nil {
		return State{}, fmt.Errorf("node: cloning service state: %w", err)
	}
	out.Service = svc
	return out, nil
}

// TimerAt returns the deadline of the timer name and whether it is scheduled.
func (s *State) TimerAt(name string) (time.Time, bool) {
	i, ok := s.timerIndex(name)
	if !ok {
		return time.Time{}, false
	}
	return s.Timers[i].At, true
}

func (s *State) timerIndex(name string) (int, bool) {
	i := sort.Search(len(s.Timers), func(i int) bool { return s.Timers[i].Name >= name })
	return i, i < len(s.Timers) && s.Timers[i].Name == name
}

// setTimer schedules name at at, replacing any previous deadline.
func (s *State) setTimer(name string, at time.Time) {
	i, ok := s.timerIndex(name)
	if ok {
		s.Timers[i].At = at
		return
	}
	s.Timers = append(s.Timers, Timer{})
	copy(s.Timers[i+1:], s.Timers[i:])
	s.Timers[i] = Timer{Name: name, At: at}
}

// cancelTimer unschedules name; it reports whether it was scheduled.
func (s *State) cancelTimer(name string) bool {
	i, ok := s.timerIndex(name)
	if ok {
		s.Timers = append(s.Timers[:i], s.Timers[i+1:]...)
	}
	return ok
}
