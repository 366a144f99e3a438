package livetest

import (
	"testing"
	"time"
)

// recorder is a testing.TB that records whether it failed.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Error(args ...any)     { r.failed = true }
func (r *recorder) Errorf(string, ...any) { r.failed = true }

// TestVerifyNoneWaitsForAGoroutineThatEnds: a goroutine that ends within
// the grace period (but after goleak's own retries, about 0.4s) is not a
// leak, and VerifyNone returns once it ended.
func TestVerifyNoneWaitsForAGoroutineThatEnds(t *testing.T) {
	done := make(chan struct{})
	go func() { <-done }()
	time.AfterFunc(time.Second, func() { close(done) })
	r := &recorder{TB: t}
	VerifyNone(r)
	if r.failed {
		t.Fatal("a goroutine that ended within the grace period was called a leak")
	}
}
