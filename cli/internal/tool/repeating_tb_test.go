package tool

import (
	"fmt"
	"sync"
	"testing"
)

// repeatingTB is a testing.TB that remembers its failure messages so a
// test can say them again at the very end of its output, after a long
// dump (the nodes' logs): CI keeps only the tail of a failing run's
// output, and the reason must be in it. Safe for concurrent use.
type repeatingTB struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (r *repeatingTB) record(format string, args []any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

// Errorf records the message and fails the test as t.Errorf does.
func (r *repeatingTB) Errorf(format string, args ...any) {
	r.TB.Helper()
	r.record(format, args)
	r.TB.Errorf(format, args...)
}

// Fatalf records the message and stops the test as t.Fatalf does.
func (r *repeatingTB) Fatalf(format string, args ...any) {
	r.TB.Helper()
	r.record(format, args)
	r.TB.Fatalf(format, args...)
}

// Error records the message and fails the test as t.Error does.
func (r *repeatingTB) Error(args ...any) {
	r.TB.Helper()
	r.record("%s", []any{fmt.Sprint(args...)})
	r.TB.Error(args...)
}

// Fatal records the message and stops the test as t.Fatal does.
func (r *repeatingTB) Fatal(args ...any) {
	r.TB.Helper()
	r.record("%s", []any{fmt.Sprint(args...)})
	r.TB.Fatal(args...)
}

// repeat logs every recorded failure message again.
func (r *repeatingTB) repeat() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, m := range r.msgs {
		r.TB.Logf("failure %d of %d, repeated after the logs: %s", i+1, len(r.msgs), m)
	}
}

// TestRepeatingTBRecordsFailures checks the recorder on a stand-in TB
// that records instead of failing.
func TestRepeatingTBRecordsFailures(t *testing.T) {
	inner := &quietTB{TB: t}
	r := &repeatingTB{TB: inner}
	r.Errorf("n%d: %v", 2, "no clean stop")
	r.Error("metrics", " lacking")
	r.repeat()
	want := []string{"failure 1 of 2, repeated after the logs: n2: no clean stop", "failure 2 of 2, repeated after the logs: metrics lacking"}
	if inner.errors != 2 || fmt.Sprint(inner.logs) != fmt.Sprint(want) {
		t.Fatalf("errors %d, logs %q, want 2 and %q", inner.errors, inner.logs, want)
	}
}

// quietTB counts failures and keeps log lines without failing the test.
type quietTB struct {
	testing.TB
	errors int
	logs   []string
}

func (q *quietTB) Helper()                        {}
func (q *quietTB) Errorf(format string, a ...any) { q.errors++ }
func (q *quietTB) Error(a ...any)                 { q.errors++ }
func (q *quietTB) Logf(format string, a ...any)   { q.logs = append(q.logs, fmt.Sprintf(format, a...)) }
