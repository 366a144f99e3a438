package tool

import (
	"errors"
	"fmt"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// rerunCauses ends the error of an emulation trace whose re-run diverges:
// the two causes, and how to tell them apart.
const rerunCauses = ", or the service is not deterministic: 'emulate --check-determinism' with the header's flags runs it twice in this build and names the first event where the two runs differ (none: the trace is of another build)"

// replayChecks is how many times a report that does not replay is
// replayed again with every transition checked twice, to tell a service
// that is not deterministic from a report of another build: a handler
// that iterates a map may agree with itself by chance.
const replayChecks = 3

// replayReport replays rep on m and checks that it reaches the recorded
// state and violation. A report that does not replay has one of two
// causes, which the error names: another build of the program (or
// version of the service) wrote it, or the service is not deterministic.
// To tell them apart it replays the path again with the determinism
// check on every transition (consequence.DeterminismCheck): a mismatch
// there is the service's, and the error says which event and field.
func replayReport(m *consequence.ActorModel, rep consequence.ActorReport) error {
	_, _, err := m.ReplayReport(rep, m.Properties())
	if err == nil || !isReplayMismatch(err) {
		return err
	}
	checked, cerr := m.WithDeterminismCheck(1)
	if cerr != nil {
		return errors.Join(err, cerr)
	}
	if again := findNondeterminism(checked, rep); again != nil {
		return fmt.Errorf("%w; replaying it again with every step run twice shows why: %w", err, again)
	}
	return fmt.Errorf("%w: the report was written by another build of the program or version of the service "+
		"(this build replays the path the same way each time, every step run twice), "+
		"or the service is not deterministic in a way one replay does not show "+
		"(nodetest.Conformance or 'emulate --check-determinism' looks longer)", err)
}

// isReplayMismatch reports whether a replay's err says the report does
// not replay (another build, or a service that is not deterministic)
// rather than that it cannot be read.
func isReplayMismatch(err error) bool {
	return errors.Is(err, consequence.ErrBadReport) || errors.Is(err, consequence.ErrNondeterministic)
}

// findNondeterminism replays rep replayChecks times on checked (the
// model with the determinism check on) and returns the first
// consequence.ErrNotDeterministic one of them found, or nil.
func findNondeterminism(checked *consequence.ActorModel, rep consequence.ActorReport) error {
	for range replayChecks {
		if again := replayRecovering(checked, rep); errors.Is(again, consequence.ErrNotDeterministic) {
			return again
		}
	}
	return nil
}

// replayRecovering is ReplayReport turning the model's panics (the
// determinism check's) into errors.
func replayRecovering(m *consequence.ActorModel, rep consequence.ActorReport) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(error); ok {
				err = e
				return
			}
			err = fmt.Errorf("%v", p)
		}
	}()
	_, _, err = m.ReplayReport(rep, m.Properties())
	return err
}
