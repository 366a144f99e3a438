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

// String returns "off", "debug" or "steer".
func (m Mode) String() string {
	switch m {
	case Off:
		return "off"
	case Debug:
		return "debug"
	case Steer:
		return "steer"
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// ParseMode parses the names String returns.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "off":
		return Off, nil
	case "debug":
		return Debug, nil
	case "steer":
		return Steer, nil
	}
	return 0, fmt.Errorf("%w: unknown mode %q (want off, debug or steer)", ErrInvalidConfig, s)
}
