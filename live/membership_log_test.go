package live

import (
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestMemberlistLogLevels: memberlist's "[LEVEL]" prefixes become zap
// levels, unknown prefixes log at info, and a send on a socket Stop closed
// (memberlist's goroutines outlive its shutdown) logs at debug, not error.
func TestMemberlistLogLevels(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	w := newMemberlistLogger(zap.New(core))
	lines := []string{
		"[DEBUG] memberlist: Stream connection from=127.0.0.1:5",
		"[WARN] memberlist: Was able to connect to n2 over TCP but UDP probes failed",
		"[ERR] memberlist: Failed to send gossip to 127.0.0.1:17102: write udp 127.0.0.1:17101->127.0.0.1:17102: use of closed network connection",
		"[ERR] memberlist: Failed to receive: bad",
		"no prefix at all",
	}
	for _, l := range lines {
		w.Print(l)
	}
	want := []zapcore.Level{zapcore.DebugLevel, zapcore.WarnLevel, zapcore.DebugLevel, zapcore.ErrorLevel, zapcore.InfoLevel}
	got := logs.All()
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i, e := range got {
		if e.Level != want[i] {
			t.Errorf("%q logged at %v, want %v", lines[i], e.Level, want[i])
		}
		if e.Message == "" || e.Message[0] == '[' {
			t.Errorf("%q: message %q keeps its prefix", lines[i], e.Message)
		}
	}
}
