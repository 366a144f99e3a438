//go:build long

package consequence

import "testing"

// TestSymmetryVoterOrbitsFive is TestSymmetryVoterOrbits with 5 voters:
// 3,125 states without symmetry, C(9, 4) = 126 with it (about 2 s of CPU
// under the race detector, three times the 2..4 voters of the quick test).
func TestSymmetryVoterOrbitsFive(t *testing.T) { checkVoterOrbits(t, 5, 5) }

// TestSymmetryPaxosExactOrbitsDepth8 is TestSymmetryPaxosExactOrbits to
// depth 8: 3,209 states in 1,073 orbits, the states the symmetric search
// keeps.
func TestSymmetryPaxosExactOrbitsDepth8(t *testing.T) { checkPaxosExactOrbits(t, 8, 3209, 1073) }
