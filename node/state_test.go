package node

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"
)

// mapService has the kinds of fields whose encoding Go's map iteration order
// could make non-canonical: maps with integer, string and struct values, a
// nested map, and a slice of maps.
type mapService struct {
	Peers  map[ID]bool
	Names  map[string]int
	Nested map[ID]map[string]ID
	Lists  []map[ID]uint32
	Count  int
	config string // not state
}

func (s *mapService) Init(Env)                           {}
func (s *mapService) HandleMessage(Env, ID, Message)     {}
func (s *mapService) HandleTimer(Env, string)            {}
func (s *mapService) HandleApp(Env, Message)             {}
func (s *mapService) HandleTransportError(env Env, _ ID) {}

func newMapService() Service { return &mapService{config: "cfg"} }

// fillMapService inserts n entries in an order given by perm, so two calls
// with different permutations build equal values through different
// insertion orders (and so, usually, different iteration orders).
func fillMapService(n int, perm []int) *mapService {
	s := &mapService{
		Peers:  map[ID]bool{},
		Names:  map[string]int{},
		Nested: map[ID]map[string]ID{},
		Lists:  []map[ID]uint32{{}, {}},
	}
	for _, i := range perm {
		id := ID(i*7919 + 1)
		s.Peers[id] = i%2 == 0
		s.Names[fmt.Sprintf("peer-%d", i)] = i
		inner := map[string]ID{}
		for j := 0; j < 3; j++ {
			inner[fmt.Sprintf("k%d", (i+j)%5)] = ID(j + 1)
		}
		s.Nested[id] = inner
		s.Lists[i%2][id] = uint32(i)
	}
	s.Count = n
	return s
}

func TestCanonicalEncodingIgnoresMapOrder(t *testing.T) {
	const n = 40
	var ref []byte
	var refHash Hash
	for seed := uint64(0); seed < 25; seed++ {
		r := NewRand(seed, 1)
		st := State{
			Service: fillMapService(n, r.Perm(n)),
			Timers:  []Timer{{Name: "a", At: time.Unix(5, 0)}, {Name: "b", At: time.Unix(9, 0)}},
			Rand:    NewRand(3, 3),
		}
		b, err := st.AppendCheckpoint(nil)
		if err != nil {
			t.Fatal(err)
		}
		h, err := st.Hash()
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref, refHash = b, h
			continue
		}
		if !bytes.Equal(b, ref) {
			t.Fatalf("seed %d: same state encoded to different bytes", seed)
		}
		if h != refHash {
			t.Fatalf("seed %d: same state hashed to %s, want %s", seed, h, refHash)
		}
	}
}

func TestHashDistinguishesStates(t *testing.T) {
	base := func() State {
		return State{Service: fillMapService(5, []int{0, 1, 2, 3, 4}), Rand: NewRand(1, 1)}
	}
	h0 := mustHash(t, base())

	changedMap := base()
	changedMap.Service.(*mapService).Nested[1]["k0"] = 99
	changedTimer := base()
	changedTimer.setTimer("t", time.Unix(1, 0))
	changedRand := base()
	changedRand.Rand.Uint64()

	for name, st := range map[string]State{"nested map value": changedMap, "timer": changedTimer, "random source": changedRand} {
		if mustHash(t, st) == h0 {
			t.Errorf("changing the %s did not change the hash", name)
		}
	}
}

func TestFingerprintIgnoresTimerDeadlines(t *testing.T) {
	a := State{Service: &mapService{}, Rand: NewRand(1, 1)}
	b := State{Service: &mapService{}, Rand: NewRand(1, 1)}
	a.setTimer("recovery", time.Unix(10, 0))
	b.setTimer("recovery", time.Unix(99, 0))
	if mustHash(t, a) != mustHash(t, b) {
		t.Fatal("fingerprints differ only by a timer deadline, want equal")
	}
	ca, _ := a.AppendCheckpoint(nil)
	cb, _ := b.AppendCheckpoint(nil)
	if bytes.Equal(ca, cb) {
		t.Fatal("checkpoints must keep the deadline")
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	st := State{Service: fillMapService(10, []int{9, 3, 1, 0, 2, 4, 8, 7, 5, 6}), Rand: NewRand(11, 2)}
	st.setTimer("join", time.Unix(3, 500))
	st.setTimer("recovery", time.Unix(7, 0))
	st.Rand.Uint64()
	b, err := st.AppendCheckpoint(nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeCheckpoint(b, newMapService)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := got.AppendCheckpoint(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, b2) {
		t.Fatal("checkpoint does not round-trip")
	}
	if got.Service.(*mapService).config != "cfg" {
		t.Fatal("configuration from the factory was lost")
	}
	if at, ok := got.TimerAt("join"); !ok || !at.Equal(time.Unix(3, 500)) {
		t.Fatalf("join timer = %v %v", at, ok)
	}
	// The random source continues where it was.
	if x, y := st.Rand.Uint64(), got.Rand.Uint64(); x != y {
		t.Fatalf("random source diverged: %d vs %d", x, y)
	}
}

func TestCloneIsIndependent(t *testing.T) {
	st := State{Service: fillMapService(4, []int{0, 1, 2, 3}), Rand: NewRand(1, 1)}
	st.setTimer("a", time.Unix(1, 0))
	h := mustHash(t, st)
	cp, err := st.Clone(newMapService)
	if err != nil {
		t.Fatal(err)
	}
	if mustHash(t, cp) != h {
		t.Fatal("clone hashes differently")
	}
	cp.Service.(*mapService).Nested[ID(1)]["k0"] = 1234
	cp.setTimer("b", time.Unix(2, 0))
	cp.Rand.Uint64()
	if mustHash(t, st) != h {
		t.Fatal("mutating the clone changed the original")
	}
}

func TestDecodeCheckpointRejectsBadInput(t *testing.T) {
	st := State{Service: fillMapService(3, []int{0, 1, 2}), Rand: NewRand(1, 1)}
	st.setTimer("t", time.Unix(1, 0))
	good, _ := st.AppendCheckpoint(nil)
	cases := map[string][]byte{
		"empty":           nil,
		"wrong tag":       append([]byte{0x00}, good[1:]...),
		"fingerprint":     mustFingerprint(t, st),
		"truncated":       good[:len(good)-1],
		"trailing":        append(append([]byte{}, good...), 0),
		"huge body len":   append([]byte{checkpointFormatV1, 0xff, 0xff, 0xff, 0xff}, good[5:]...),
		"array32 service": append([]byte{checkpointFormatV1, 0, 0, 0, 5, 0xdd, 0xff, 0xff, 0xff, 0xff}, good[5:]...),
	}
	for name, b := range cases {
		if _, err := DecodeCheckpoint(b, newMapService); !errors.Is(err, ErrBadCheckpoint) {
			t.Errorf("%s: err = %v, want ErrBadCheckpoint", name, err)
		}
	}
}

func mustHash(t testing.TB, st State) Hash {
	t.Helper()
	h, err := st.Hash()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func mustFingerprint(t testing.TB, st State) []byte {
	t.Helper()
	b, err := st.AppendFingerprint(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
