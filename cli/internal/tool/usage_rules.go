package tool

import "cmp"

// usageRule is one check of a command's flags or input (or of a
// Program's contract): when broken holds, err is the error reported —
// a usage error for flags and input. A list of rules checked in order
// replaces a chain of ifs that each return.
type usageRule struct {
	broken bool
	err    error
}

// firstBrokenUsageRule returns the error of the first broken rule, in the
// order given (the order the checks report in), or nil.
func firstBrokenUsageRule(rules ...usageRule) error {
	for _, r := range rules {
		if r.broken {
			return r.err
		}
	}
	return nil
}

// firstFailingStep runs steps in order and returns the first error, not
// running the steps after it: a validation or setup that goes phase by
// phase.
func firstFailingStep(steps ...func() error) error {
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// firstNonNilError returns the first non-nil error of errs (checks already
// made, with no effects), or nil.
func firstNonNilError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// outsideClosedRange reports whether v lies outside lo..hi (both included).
func outsideClosedRange[T cmp.Ordered](v, lo, hi T) bool { return v < lo || v > hi }

// anyConditionHolds reports whether any of conds holds.
func anyConditionHolds(conds ...bool) bool {
	for _, c := range conds {
		if c {
			return true
		}
	}
	return false
}
