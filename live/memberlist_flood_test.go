package live

import (
	"log"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/live/livetest"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestMemberlistLogFloodIsBounded: 20,000 lines about bad packets become at
// most memberlistLogBurst warn lines per interval (none at error), the
// rest are counted, and the next interval's first line says how many were
// dropped.
func TestMemberlistLogFloodIsBounded(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	var suppressed atomic.Uint64
	now := time.Unix(0, 0)
	w := &zapLogWriter{log: zap.New(core), limit: newLogLimiter(time.Second, memberlistLogBurst), suppressed: &suppressed}
	w.limit.now = func() time.Time { return now }
	l := log.New(w, "", 0)
	for range 20000 {
		l.Print(`[ERR] memberlist: discarding packet with unacceptable label "": from=127.0.0.1:4000`)
	}
	if n := logs.Len(); n != memberlistLogBurst {
		t.Fatalf("%d lines logged, want %d", n, memberlistLogBurst)
	}
	for _, e := range logs.All() {
		if e.Level != zapcore.WarnLevel {
			t.Errorf("logged at %v: %s", e.Level, e.Message)
		}
	}
	if got := suppressed.Load(); got != 20000-memberlistLogBurst {
		t.Errorf("suppressed = %d", got)
	}
	now = now.Add(time.Second)
	l.Print("[WARN] memberlist: next")
	last := logs.All()[logs.Len()-1]
	if last.ContextMap()["suppressed_before"] != int64(20000-memberlistLogBurst) {
		t.Errorf("first line of the next interval: %v", last.ContextMap())
	}
	// Debug and info lines are not limited.
	for range 100 {
		l.Print("[DEBUG] memberlist: Stream connection from=127.0.0.1:5")
	}
	if got := logs.FilterLevelExact(zapcore.DebugLevel).Len(); got != 100 {
		t.Errorf("%d debug lines, want 100", got)
	}
}

// memberlistLines counts memberlist's lines at warn and above.
func memberlistLines(logs *observer.ObservedLogs) int {
	return logs.Filter(func(e observer.LoggedEntry) bool {
		return e.Level >= zapcore.WarnLevel && e.ContextMap()["component"] == "memberlist"
	}).Len()
}

// TestRuntimeGarbageGossipLogsBounded: garbage UDP packets to the gossip
// port cost a bounded number of warn lines, never error lines.
func TestRuntimeGarbageGossipLogsBounded(t *testing.T) {
	defer livetest.VerifyNone(t)
	core, logs := observer.New(zapcore.DebugLevel)
	started := time.Now()
	n1 := startNoteNode(t, 1, zap.New(core))
	defer stopNodes(t, n1)
	c, err := net.Dial("udp", n1.GossipAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const packets = 2000
	for i := range packets {
		c.Write([]byte{byte(i), 1, 2, 3, 4, 5, 6, 7})
		if i%100 == 99 {
			// Let memberlist's reader keep up so that few packets are
			// lost in the socket buffer; the bound below holds anyway.
			waitFor(t, "memberlist to read the packets", func() bool {
				st := n1.Status().Counters.LogLinesSuppressed
				return st+uint64(memberlistLines(logs)) >= uint64(i+1)/2
			})
		}
	}
	elapsed := time.Since(started)
	warns := logs.FilterField(zap.String("component", "memberlist")).FilterLevelExact(zapcore.WarnLevel).Len()
	if errs := logs.FilterLevelExact(zapcore.ErrorLevel).Len(); errs != 0 {
		t.Errorf("%d error lines", errs)
	}
	intervals := int(elapsed/memberlistLogInterval) + 2
	if warns > memberlistLogBurst*intervals {
		t.Errorf("%d warn lines in %v, want at most %d", warns, elapsed, memberlistLogBurst*intervals)
	}
	t.Logf("%d packets: %d warn lines, %d suppressed in %v", packets, warns, n1.Status().Counters.LogLinesSuppressed, elapsed)
}
