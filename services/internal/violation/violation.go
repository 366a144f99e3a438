package violation

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/seed6eee2ec7/crystalball/node"
)

// List accumulates the messages of a failing check, separated by "; ".
// Its zero value holds nothing and describes every violation; see Bounded.
type List struct {
	b    []byte
	n    int // violations found
	max  int // violations described; 0 means all
	more int // violations found past max, not described
}

// Bounded returns an empty List that describes the first max violations
// and only counts the rest. max must be positive.
func Bounded(max int) List {
	if max <= 0 {
		panic(fmt.Sprintf("violation: Bounded(%d): the bound must be positive", max))
	}
	return List{max: max}
}

// Next starts a new violation and reports whether to describe it: false
// once a bounded List has described its bound. A check that describes a
// violation piece by piece (AppendString, AppendID, AppendInt) calls Next
// first and appends only when it returns true.
func (l *List) Next() bool {
	l.n++
	if l.max > 0 && l.n > l.max {
		l.more++
		return false
	}
	if l.n > 1 {
		l.b = append(l.b, "; "...)
	}
	return true
}

// Add starts a new violation (Next) and, when it is described, formats it
// as fmt.Sprintf(format, args...) would.
func (l *List) Add(format string, args ...any) {
	if l.Next() {
		l.b = fmt.Appendf(l.b, format, args...)
	}
}

// AppendString appends s to the violation Next started.
func (l *List) AppendString(s string) { l.b = append(l.b, s...) }

// AppendID appends "n" and id in decimal ("n9", as node.ID prints every
// ID but None) to the violation Next started, without formatting.
func (l *List) AppendID(id node.ID) { l.b = strconv.AppendUint(append(l.b, 'n'), uint64(id), 10) }

// AppendInt appends n in decimal to the violation Next started.
func (l *List) AppendInt(n int) { l.b = strconv.AppendInt(l.b, int64(n), 10) }

// Len returns how many violations were found, described or not.
func (l List) Len() int { return l.n }

// Err returns nil when no violation was found, and otherwise an error
// whose text is the violations described, separated by "; ", followed by
// "; and N more" when a bounded List left N undescribed.
func (l List) Err() error {
	if l.n == 0 {
		return nil
	}
	if l.more > 0 {
		l.b = fmt.Appendf(l.b, "; and %d more", l.more)
	}
	return errors.New(string(l.b))
}
