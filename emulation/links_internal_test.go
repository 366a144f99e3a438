package emulation

import (
	"testing"
	"time"
)

// A send queue that never empties (one message leaves, one joins) keeps
// its byte count exact and its backing slice bounded.
func TestSendQueueStaysBounded(t *testing.T) {
	var q sendQueue
	for i := 0; i < 10; i++ {
		q.push(time.Duration(i), 100)
	}
	for i := 10; i < 10_000; i++ {
		q.drain(time.Duration(i - 10))
		q.push(time.Duration(i), 100)
		if q.bytes != 1000 {
			t.Fatalf("step %d: %d bytes queued, want 1000", i, q.bytes)
		}
	}
	if len(q.items) > 200 {
		t.Fatalf("backing slice holds %d entries for 10 queued messages", len(q.items))
	}
}

func TestTxTime(t *testing.T) {
	for _, c := range []struct {
		size int
		bps  int64
		want time.Duration
	}{{1000, 8_000_000, time.Millisecond}, {1, 1_000_000, 8 * time.Microsecond}, {1, 3, 2666666667}, {5, 0, 0}} {
		if got := txTime(c.size, c.bps); got != c.want {
			t.Errorf("txTime(%d, %d) = %v, want %v", c.size, c.bps, got, c.want)
		}
	}
}
