package live

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

// probeGrace bounds how long a memberlist failure-detector probe may
// outlive Runtime.Stop: memberlist v0.7.0 does not join a probe in
// progress when it shuts down (probeNode waits out its probe interval,
// 1s with memberlist's local defaults), so a check right after Stop can
// see it. Generous, for a loaded machine; a real leak never ends.
const probeGrace = 10 * time.Second

// VerifyNoLeaks fails t if a goroutine that was not running when ignore
// was taken is still running probeGrace after the call: goleak.VerifyNone
// with a deadline long enough for memberlist's probes in flight. It polls;
// it returns as soon as none is left. (Exported for the live_test package:
// this file is compiled only into the package's tests.)
func VerifyNoLeaks(t testing.TB, opts ...goleak.Option) {
	t.Helper()
	for deadline := time.Now().Add(probeGrace); goleak.Find(opts...) != nil && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	goleak.VerifyNone(t, opts...)
}
