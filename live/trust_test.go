package live

import (
	"net"
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"

	"go.uber.org/zap"
)

// sendEnvelope writes env as one frame on conn (a spoofed data connection).
func sendEnvelope(t *testing.T, conn net.Conn, env node.Envelope) {
	t.Helper()
	reg, err := node.NewRegistry(noteSpec().Messages...)
	if err != nil {
		t.Fatal(err)
	}
	frame, start := node.BeginFrame(nil)
	if frame, err = reg.AppendEnvelope(frame, env); err != nil {
		t.Fatal(err)
	}
	node.FinishFrame(frame, start)
	if _, err := conn.Write(frame); err != nil {
		t.Fatal(err)
	}
}

// TestForgedIDsCannotPoisonCheckpointNumbers: two IDs nobody confirmed
// (hellos claim them; memberlist never admitted them) each send one
// message stamped just below MaxCN. main took them for two peers agreeing
// and caught the node up: its numbers exhausted, every gather failed, and
// a restarted node was poisoned again within seconds. Now they vouch for
// nothing: the messages reach the service, the number stays.
func TestForgedIDsCannotPoisonCheckpointNumbers(t *testing.T) {
	defer livetest.VerifyNone(t)
	reg, err := node.NewRegistry(noteSpec().Messages...)
	if err != nil {
		t.Fatal(err)
	}
	sl, err := snapshot.NewLive(snapshot.Config{Registry: reg, Interval: time.Hour}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), func(c *RuntimeConfig) { c.Layers = []node.Layer{sl} })
	defer stopNodes(t, n1)
	for _, id := range []node.ID{50, 51} {
		conn, err := spoofHello(t, n1.Addr(), id, "127.0.0.1:1")
		if err != nil {
			t.Fatal(err)
		}
		sendEnvelope(t, conn, node.Envelope{From: id, To: 1, CN: snapshot.MaxCN - 5, Msg: note{Text: "poison"}})
	}
	waitFor(t, "both forged notes to reach the service", func() bool {
		got := noteState(t, n1).Got
		return slices.Contains(got, "n50:poison") && slices.Contains(got, "n51:poison")
	})
	if st := sl.Status(time.Now()); st.CN > 10 || st.Stats.Exhausted {
		t.Fatalf("two forged IDs moved n1's checkpoint number to %d (exhausted %v)", st.CN, st.Stats.Exhausted)
	}
}
