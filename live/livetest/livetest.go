// Package livetest holds what a test of code that runs live.Runtimes
// needs beyond the standard library: leak checks that allow for the one
// goroutine a stopped runtime does not wait for, and a throwaway
// certificate authority (CA, in memory) that issues the node certificates
// mutual TLS between runtimes needs, and the gossip packet a hostile peer
// floods a node with (AliveGossip).
//
// memberlist (v0.7.0) does not join a failure-detector probe in progress
// when it shuts down: the probe (probeNode, and its TCP fallback ping)
// waits out its probe interval and then ends by itself. That interval is
// 1s with the runtime's defaults, but memberlist stretches it up to
// AwarenessMaxMultiplier (8) times while its own probes fail — as they do
// on a loaded machine and while the peers of a test stop one by one — so a
// probe can outlive live.Runtime.Stop by 8s, more when the race detector
// and a busy machine delay its timer. A goleak check right after Stop can
// therefore see it. VerifyNone and VerifyTestMain poll for up to Grace
// before they call a goroutine a leak; a real leak never ends, so it still
// fails, only later.
package livetest

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Grace is how long the checks wait for goroutines to end: memberlist's
// longest probe (8s, see the package doc) with room for a machine loaded
// enough to delay its timer by as much again, and more. The checks return
// as soon as no goroutine is left, so only a real leak pays it in full.
const Grace = 30 * time.Second

// poll is how often the checks look again.
const poll = 20 * time.Millisecond

// settle returns goleak.Find's verdict once no unexpected goroutine is
// left, or the last one when Grace has passed.
func settle(opts ...goleak.Option) error {
	deadline := time.Now().Add(Grace)
	for {
		err := goleak.Find(opts...)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(poll)
	}
}

// VerifyNone fails t if goroutines other than those opts ignore are still
// running Grace after the call (goleak.VerifyNone with a grace period). It
// returns as soon as none is left. Use it deferred at the top of a test.
func VerifyNone(t testing.TB, opts ...goleak.Option) {
	t.Helper()
	if err := settle(opts...); err != nil {
		t.Error(err)
	}
}

// VerifyTestMain runs the tests and examples of m and, when they passed,
// exits non-zero if goroutines other than those opts ignore are still
// running Grace later (goleak.VerifyTestMain with a grace period). Call it
// from TestMain.
func VerifyTestMain(m *testing.M, opts ...goleak.Option) {
	code := m.Run()
	if code == 0 {
		if err := settle(opts...); err != nil {
			fmt.Fprintf(os.Stderr, "livetest: goroutines left after the tests: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
