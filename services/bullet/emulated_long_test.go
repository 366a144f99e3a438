//go:build long

package bullet_test

import (
	"testing"
	"time"
)

// TestEmulatedCheckpointSizeAtAMinute is TestEmulatedCheckpointSize a
// minute into the download, the figures docs/PERFORMANCE.md quotes (raw
// median 2,344 B, max 2,757 B; about 5 s of CPU under the race detector).
func TestEmulatedCheckpointSizeAtAMinute(t *testing.T) { checkCheckpointSize(t, time.Minute) }
