package tool

import "cmp"

// UsageRule is one check of a command's flags or input (or of a
// Program's contract): when Broken holds, Err is the error reported —
// a usage error for flags and input. A list of rules checked in order
// replaces a chain of ifs that each return; cli/papers' experiment
// commands check their flags with the same rules.
type UsageRule struct {
	Broken bool
	Err    error
}

// BrokenIf is the rule that broken breaks, refused with err.
func BrokenIf(broken bool, err error) UsageRule { return UsageRule{Broken: broken, Err: err} }

// FirstBrokenRule returns the error of the first broken rule, in the
// order given (the order the checks report in), or nil.
func FirstBrokenRule(rules ...UsageRule) error {
	for _, r := range rules {
		if r.Broken {
			return r.Err
		}
	}
	return nil
}

// firstFailingStep runs steps in order and returns the first error, not
// running the steps after it (so a step may rely on what those before it
// resolved): a validation or setup that goes phase by phase.
func firstFailingStep(steps ...func() error) error {
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// FirstNonNilError returns the first non-nil error of errs (checks
// already made, with no effects), or nil.
func FirstNonNilError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// outsideClosedRange reports whether v lies outside lo..hi (both included).
func outsideClosedRange[T cmp.Ordered](v, lo, hi T) bool { return v < lo || v > hi }

// AnyConditionHolds reports whether any of conds holds: one flag of a
// group that shares an error message is out of bounds.
func AnyConditionHolds(conds ...bool) bool {
	for _, c := range conds {
		if c {
			return true
		}
	}
	return false
}
