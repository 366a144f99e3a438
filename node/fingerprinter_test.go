package node

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// historyService keeps its inputs as state and fingerprints only their
// sum: two histories with the same sum are one state to the explorer.
type historyService struct {
	mapService
	History []int
}

func (h *historyService) AppendFingerprint(dst []byte) ([]byte, error) {
	sum := 0
	for _, v := range h.History {
		sum += v
	}
	return AppendCanonical(dst, sum)
}

func TestFingerprinterReplacesTheServiceEncodingInHashesOnly(t *testing.T) {
	a := State{Service: &historyService{History: []int{1, 2}}, Rand: NewRand(1, 1)}
	b := State{Service: &historyService{History: []int{3}}, Rand: NewRand(1, 1)}
	c := State{Service: &historyService{History: []int{4}}, Rand: NewRand(1, 1)}
	if mustHash(t, a) != mustHash(t, b) {
		t.Error("states with equal fingerprints hash differently")
	}
	if mustHash(t, a) == mustHash(t, c) {
		t.Error("states with different fingerprints hash equal")
	}
	ca, err := a.AppendCheckpoint(nil)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := b.AppendCheckpoint(nil)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(ca, cb) {
		t.Error("the checkpoint encoding used the fingerprint: two histories encoded alike")
	}
	back, err := DecodeCheckpoint(ca, func() Service { return &historyService{} })
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Service.(*historyService).History; len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("checkpoint round trip gave history %v, want [1 2]", got)
	}
}

func TestAppendCanonicalSortsMaps(t *testing.T) {
	x, err := AppendCanonical(nil, map[ID]int{3: 1, 1: 2, 2: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		y, err := AppendCanonical(nil, map[ID]int{2: 3, 3: 1, 1: 2})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Fatalf("equal maps encoded to %x and %x", x, y)
		}
	}
}

func TestRandBinaryRoundTrip(t *testing.T) {
	r := NewRand(7, 3)
	r.Uint64()
	b, err := r.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	var back Rand
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if x, y := r.Uint64(), back.Uint64(); x != y {
			t.Fatalf("draw %d: %d after the round trip, %d before", i, y, x)
		}
	}
	keep := back
	for _, bad := range [][]byte{nil, b[:19], append(append([]byte{}, b...), 0), bytes.Repeat([]byte{0xff}, 20)} {
		if err := back.UnmarshalBinary(bad); err == nil && len(bad) != 20 {
			t.Errorf("UnmarshalBinary(%x) = nil, want an error", bad)
		}
		if len(bad) != 20 && back != keep {
			t.Errorf("a failed UnmarshalBinary(%x) changed the source", bad)
		}
	}
}

// canonNested mixes scalars, arrays, structs and maps at several depths:
// the shapes canonicalMsgpack copies in runs or sorts.
type canonNested struct {
	A []int
	B []map[string]int
	C map[int][]int
	D []struct {
		X int
		M map[int]bool
	}
}

// TestAppendCanonicalNested: canonical bytes of nested values do not
// depend on map order, decode to the value encoded, and are their own
// canonical form, for random values (seed printed on failure).
func TestAppendCanonicalNested(t *testing.T) {
	const seed = 1
	rng := rand.New(rand.NewPCG(seed, 0))
	for trial := range 200 {
		var v canonNested
		for range rng.IntN(6) {
			v.A = append(v.A, rng.IntN(1000)-500)
		}
		for range rng.IntN(4) {
			m := map[string]int{}
			for range rng.IntN(4) {
				m[fmt.Sprint(rng.IntN(50))] = rng.IntN(9)
			}
			v.B = append(v.B, m)
		}
		if rng.IntN(2) == 0 {
			v.C = map[int][]int{}
			for range rng.IntN(5) {
				v.C[rng.IntN(20)] = []int{rng.IntN(3), rng.IntN(70000)}
			}
		}
		for range rng.IntN(4) {
			e := struct {
				X int
				M map[int]bool
			}{X: rng.IntN(300), M: map[int]bool{}}
			for range rng.IntN(4) {
				e.M[rng.IntN(10)] = rng.IntN(2) == 0
			}
			v.D = append(v.D, e)
		}
		x, err := AppendCanonical(nil, v)
		if err != nil {
			t.Fatalf("seed %d trial %d: %v", seed, trial, err)
		}
		for range 5 {
			if y, _ := AppendCanonical(nil, v); !bytes.Equal(x, y) {
				t.Fatalf("seed %d trial %d: one value encoded to %x and %x", seed, trial, x, y)
			}
		}
		if again, err := canonicalMsgpack(nil, x); err != nil || !bytes.Equal(again, x) {
			t.Fatalf("seed %d trial %d: canonical bytes are not their own canonical form (%v)", seed, trial, err)
		}
		var back canonNested
		if err := unmarshalMsgpack(x, &back); err != nil {
			t.Fatalf("seed %d trial %d: %v", seed, trial, err)
		}
		if y, _ := AppendCanonical(nil, back); !bytes.Equal(x, y) {
			t.Fatalf("seed %d trial %d: the decoded value encodes to %x, want %x", seed, trial, y, x)
		}
	}
}
