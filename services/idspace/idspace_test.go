package idspace_test

import (
	"errors"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/idspace"
)

// TestPlacement: by-id keeps the ID order within the mask, hashed is
// node.Mix64 truncated; names round-trip and a bad one is an error.
func TestPlacement(t *testing.T) {
	mask := idspace.Mask(16)
	if mask != 0xffff || idspace.Mask(64) != ^uint64(0) {
		t.Fatalf("Mask(16) %#x, Mask(64) %#x", mask, idspace.Mask(64))
	}
	if got := idspace.PlaceByID.Place(0x12345, mask); got != 0x2345 {
		t.Errorf("by-id place of 0x12345: %#x", got)
	}
	if got, want := idspace.PlaceHashed.Place(7, mask), node.Mix64(7)&0xffff; got != want {
		t.Errorf("hashed place of 7: %#x, want %#x", got, want)
	}
	for _, p := range []idspace.Placement{idspace.PlaceHashed, idspace.PlaceByID} {
		if q, err := idspace.ParsePlacement(p.String()); err != nil || q != p {
			t.Errorf("%v: parsed back as %v, %v", p, q, err)
		}
	}
	if _, err := idspace.ParsePlacement("sideways"); !errors.Is(err, idspace.ErrUnknownPlacement) {
		t.Errorf("sideways: %v", err)
	}
}
