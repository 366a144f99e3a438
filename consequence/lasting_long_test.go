//go:build long

package consequence

import "testing"

// TestLastingPackRoundTripFull is TestLastingPackRoundTrip one level short
// of each model's depth.
func TestLastingPackRoundTripFull(t *testing.T) { checkLastingPackRoundTrip(t, 1) }

// TestLastingWalksFull is TestLastingWalks with 12 walks of 60 steps.
func TestLastingWalksFull(t *testing.T) { checkLastingWalks(t, 12, 60) }
