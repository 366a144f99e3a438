package node_test

import (
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
)

// TestMix64KnownValues pins Mix64 to SplitMix64's published outputs: the
// first values of the SplitMix64 generator seeded with 0 are
// Mix64(k·Golden64) for k = 1, 2, 3.
func TestMix64KnownValues(t *testing.T) {
	for k, want := range []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f} {
		if got := node.Mix64(uint64(k+1) * node.Golden64); got != want {
			t.Errorf("Mix64(%d·Golden64) = %#x, want %#x", k+1, got, want)
		}
	}
	if node.Mix64(0) != 0 {
		t.Error("Mix64(0) is not 0")
	}
}
