//go:build long

package consequence

import "testing"

// This file is long: the packing round trips at their full size took about
// 30 s of CPU under the race detector (TestPackRandomWalks 14 s,
// TestPackRoundTrip a level less 10.7 s, TestPackConcurrent 4.3 s; about
// 6 s here without it, the round trip at full depth 4.7 s of them): every
// state checked costs a pack, an unpack, two renderings and the successors
// of both copies. TestPackRoundTrip, TestPackRandomWalks and
// TestPackConcurrent cover the same behaviour in `make test` with two
// levels less (three for the symmetric Paxos) and 4 walks.

// TestPackRoundTripFull is TestPackRoundTrip to each configuration's
// packModel.maxDepth (about 21,000 states checked).
func TestPackRoundTripFull(t *testing.T) { checkPackRoundTrip(t, false) }

// TestPackRandomWalksFull is TestPackRandomWalks with 40 walks of 80
// steps per configuration.
func TestPackRandomWalksFull(t *testing.T) { checkPackRandomWalks(t, 17, 40, 80) }

// TestPackConcurrentFull is TestPackConcurrent one level short of
// packModel.maxDepth.
func TestPackConcurrentFull(t *testing.T) { checkPackConcurrent(t, 1) }
