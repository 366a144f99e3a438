package node

import (
	"bytes"
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
