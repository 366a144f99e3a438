//go:build long

package steering_test

import "testing"

// This file is long: TestLivenessDeadEnd at the default walk depth (500
// steps) took about 17.5 s of CPU under the race detector: three rounds of
// about 200,000 walk steps each, nearly all of them probes of dead states,
// each probe 20 walks of the full depth (1.6 s without the race detector).
// TestLivenessDeadEnd covers the same behaviour in `make test` with walks
// of 40 steps.

// TestLivenessDeadEndDefaultDepth is TestLivenessDeadEnd with walks of
// DefaultWalkDepth steps.
func TestLivenessDeadEndDefaultDepth(t *testing.T) { checkLivenessDeadEnd(t, 0) }
