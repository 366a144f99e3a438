package consequence

import (
	"errors"
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
)

// ErrNotCommuting is wrapped by CheckCommute's errors: a model's Commuter
// said two actions commute where they do not.
var ErrNotCommuting = errors.New("consequence: actions declared independent do not commute")

// CheckCommute checks a Commuter's claims in state s: for every ordered
// pair of actions (x, y) of s with Commute(s, x, y), if x is still listed
// after y (the checker carries x over only then), y must be listed after x
// (SameAction finds each exactly once), and both orders must reach states
// with equal fingerprints. It returns the number of pairs checked.
// Implementers run it on many reachable states of their model (a wrong
// claim makes partial-order reduction miss states silently); the tests of
// the actor model and of package twophase do.
func CheckCommute[S, A any](m Model[S, A], c Commuter[S, A], s S) (int, error) {
	acts := m.Actions(s, nil)
	pairs := 0
	for i, x := range acts {
		for j, y := range acts {
			if i == j || !c.Commute(s, x, y) {
				continue
			}
			yx, listed, err := both(m, c, s, y, x)
			if err != nil || !listed {
				return pairs, err // x not carried over after y: no claim
			}
			pairs++
			xy, listed, err := both(m, c, s, x, y)
			if err != nil {
				return pairs, err
			}
			if !listed {
				return pairs, fmt.Errorf("%w: %v disables %v", ErrNotCommuting, x.Act, y.Act)
			}
			if xy != yx {
				return pairs, fmt.Errorf("%w: %v then %v reaches %v, the other order %v", ErrNotCommuting, x.Act, y.Act, xy, yx)
			}
		}
	}
	return pairs, nil
}

// both takes first and then second (found again by SameAction) from s and
// returns the fingerprint reached, or listed false if second is not listed
// after first.
func both[S, A any](m Model[S, A], c Commuter[S, A], s S, first, second Action[A]) (fp node.Hash, listed bool, err error) {
	t, ok := m.Next(s, first.Act)
	if !ok {
		return fp, false, fmt.Errorf("%w: %v is disabled", ErrNotCommuting, first.Act)
	}
	for _, a := range m.Actions(t, nil) {
		if !c.SameAction(second, a) {
			continue
		}
		if listed {
			return fp, true, fmt.Errorf("%w: two actions after %v are the same as %v", ErrNotCommuting, first.Act, second.Act)
		}
		listed = true
		u, ok := m.Next(t, a.Act)
		if !ok {
			return fp, true, fmt.Errorf("%w: %v disables %v", ErrNotCommuting, first.Act, second.Act)
		}
		fp = m.Fingerprint(u)
	}
	return fp, listed, nil
}
