package papers

// usageRule is one check of an experiment's flags: when broken holds,
// err is the usage error the command reports. A list of rules checked in
// order replaces a chain of ifs that each return.
type usageRule struct {
	broken bool
	err    error
}

// firstBrokenRule returns the error of the first broken rule, in the
// order given (the order the checks report in), or nil.
func firstBrokenRule(rules ...usageRule) error {
	for _, r := range rules {
		if r.broken {
			return r.err
		}
	}
	return nil
}

// firstError returns the first non-nil error of errs (checks already
// made, with no effects), or nil.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// anyHolds reports whether any of conds holds: one flag of a group that
// share an error message is out of bounds.
func anyHolds(conds ...bool) bool {
	for _, c := range conds {
		if c {
			return true
		}
	}
	return false
}
