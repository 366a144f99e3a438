package steering

import "fmt"

// Mode says what a Controller does with what it predicts.
type Mode uint8

const (
	// Off explores nothing and installs no filters (the zero value); a
	// round only keeps the snapshot's view for the immediate safety check.
	Off Mode = iota
	// Debug explores and reports predicted violations, changing nothing.
	Debug
	// Steer also installs event filters that keep the node off the
	// predicted paths.
	Steer
)

// modeNames are the modes' names, by mode.
var modeNames = [...]string{Off: "off", Debug: "debug", Steer: "steer"}

// String returns "off", "debug" or "steer".
func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// ParseMode parses the names String returns.
func ParseMode(s string) (Mode, error) {
	for m, name := range modeNames {
		if s == name {
			return Mode(m), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown mode %q (want off, debug or steer)", ErrInvalidConfig, s)
}

// Search budgets a shell gives a round by mode when its user names none
// (`crystalball node` and `emulate` without --steer-states, and
// emulation.ModeConfig). Deep online debugging (Debug) runs on a few
// predictors that each explore far, as the paper's 100-node runs did;
// with Steer every node predicts and its rounds must stay cheap enough to
// act before the predicted events arrive (docs/PERFORMANCE.md measures
// both). Config.MaxStates, for a controller built directly, keeps its own
// default (DefaultConfig).
const (
	// DebugMaxStates is the unique states per search of a Debug round.
	DebugMaxStates = 50_000
	// SteerMaxStates is the unique states per search of a Steer round,
	// and of the view-only rounds of Off (the immediate check alone).
	SteerMaxStates = 2_000
)

// DefaultMaxStates returns the shells' search budget for a round in m:
// DebugMaxStates in Debug, SteerMaxStates otherwise.
func (m Mode) DefaultMaxStates() int {
	if m == Debug {
		return DebugMaxStates
	}
	return SteerMaxStates
}
