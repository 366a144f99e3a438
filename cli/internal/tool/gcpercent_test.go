package tool

import "testing"

// TestGCTarget: the heap may always grow by gcHeadroom (64 MB) between
// collections, never by more than Go's default, and never by less than the
// search's percentage.
func TestGCTarget(t *testing.T) {
	for _, c := range []struct {
		percent int
		live    uint64
		want    int
	}{
		{modelGCPercent, 0, 100},
		{modelGCPercent, 40 << 20, 100},    // 2PC-8: the default, not 4 MB a collection
		{modelGCPercent, 128 << 20, 50},    // 64 MB over 128
		{modelGCPercent, 640 << 20, 10},    // the percentage again
		{modelGCPercent, 1400 << 20, 10},   // 2PC-10: as before
		{serviceGCPercent, 1400 << 20, 25}, // a service's floor
	} {
		if got := gcTarget(c.percent, c.live); got != c.want {
			t.Errorf("gcTarget(%d, %d MB) = %d, want %d", c.percent, c.live>>20, got, c.want)
		}
	}
}
