package live

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"

	"go.uber.org/zap"
)

// hostilePeer is the live tests' attacker: a bounded client that speaks
// a node's wire format — live's hello, node's frames and envelopes — and
// claims whatever ID it likes. Every write has a deadline, what the node
// answers is read and dropped by one goroutine that ends when the
// connection closes, and the test's cleanup closes it.
type hostilePeer struct {
	t    *testing.T
	id   node.ID
	conn net.Conn
	reg  *node.Registry
	done chan struct{}
}

// hostileRegistry encodes what a hostile peer sends: the note service's
// messages and the snapshot and steering layers'.
func hostileRegistry(t *testing.T) *node.Registry {
	t.Helper()
	msgs := append(noteSpec().Messages, snapshot.Messages()...)
	reg, err := node.NewRegistry(append(msgs, steering.Messages()...)...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// dialHostile opens a data connection to addr whose hello claims id at
// the service address service; it fails t if the node refuses it.
func dialHostile(t *testing.T, addr string, id node.ID, service string) *hostilePeer {
	t.Helper()
	conn, err := spoofHelloAs(t, addr, id, service, service)
	if err != nil {
		t.Fatalf("the node refused the hello claiming %v: %v", id, err)
	}
	h := &hostilePeer{t: t, id: id, conn: conn, reg: hostileRegistry(t), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		io.Copy(io.Discard, conn)
	}()
	t.Cleanup(h.close)
	return h
}

// send writes env (From defaults to the peer's ID) as one frame; false
// once the node closed the connection.
func (h *hostilePeer) send(env node.Envelope) bool {
	h.t.Helper()
	if env.From == node.None {
		env.From = h.id
	}
	frame, start := BeginFrame(nil)
	frame, err := h.reg.AppendEnvelope(frame, env)
	if err != nil {
		h.t.Fatal(err)
	}
	FinishFrame(frame, start)
	h.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err = h.conn.Write(frame)
	return err == nil
}

// close closes the connection and waits for its reader.
func (h *hostilePeer) close() {
	h.conn.Close()
	<-h.done
}

// snapNode starts a note node with a snapshot layer of cfg (Registry
// filled in) and returns it with the layer.
func snapNode(t *testing.T, id node.ID, cfg snapshot.Config, tune func(*RuntimeConfig), join ...string) (*Runtime, *snapshot.Layer) {
	t.Helper()
	reg, err := node.NewRegistry(noteSpec().Messages...)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Registry = reg
	sl, err := snapshot.NewLayer(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := startNoteNodeWith(t, id, zap.NewNop(), func(c *RuntimeConfig) {
		c.Layers = []layer.Layer{sl}
		if tune != nil {
			tune(c)
		}
	}, join...)
	return r, sl
}

// gatherOnce starts a gather at r and waits for its snapshot (or
// failure), returning the snapshot or nil.
func gatherOnce(t *testing.T, r *Runtime, sl *snapshot.Layer) *snapshot.Snapshot {
	t.Helper()
	before := sl.Status(time.Now())
	if err := r.Do(context.Background(), func(now time.Time) []node.Envelope {
		out, err := sl.Gather(now)
		if err != nil {
			t.Errorf("gather: %v", err)
		}
		return out
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the gather to end", func() bool {
		st := sl.Status(time.Now())
		return st.Stats.Gathers+st.Stats.GathersFailed > before.Stats.Gathers+before.Stats.GathersFailed
	})
	if sl.Status(time.Now()).Stats.Gathers > before.Stats.Gathers {
		return sl.Last()
	}
	return nil
}

// snapNodes lists the IDs of a snapshot's nodes (never print the nodes:
// their states are bytes).
func snapNodes(s *snapshot.Snapshot) []node.ID {
	var ids []node.ID
	for _, n := range s.Nodes {
		ids = append(ids, n.Node)
	}
	return ids
}
