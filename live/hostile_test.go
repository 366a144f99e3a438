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

	"github.com/zeebo/xxh3"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
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

// observedLogger returns a logger at info level, as a deployed node logs,
// and what it logged.
func observedLogger() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.InfoLevel)
	return zap.New(core), logs
}

// liarLayer makes a real node a lying snapshot member: it answers every
// snapshot Request itself with the checkpoint state answer returns for the
// node's real one (the node runs no snapshot layer of its own), under a
// correct hash, with Markers to the other members so the gatherer need
// not wait. The node is a member memberlist proved: it lies with a
// proved identity, as an authenticated member could.
type liarLayer struct {
	host   layer.Host
	answer func(real []byte) []byte
}

func (l *liarLayer) Messages() []node.Message                { return snapshot.Messages() }
func (l *liarLayer) Attach(h layer.Host) error               { l.host = h; return nil }
func (l *liarLayer) Start(time.Time) []node.Envelope         { return nil }
func (l *liarLayer) Sending(time.Time, *node.Envelope)       {}
func (l *liarLayer) After(time.Time) []node.Envelope         { return nil }
func (l *liarLayer) Tick(time.Time) ([]node.Envelope, error) { return nil, nil }
func (l *liarLayer) NextTick() time.Time                     { return time.Time{} }
func (l *liarLayer) Before(_ time.Time, ev node.Event, in *node.Envelope) (bool, []node.Envelope, error) {
	if in == nil || !layer.IsMessage(in.Msg) {
		return true, nil, nil
	}
	req, ok := in.Msg.(snapshot.Request)
	if !ok {
		return false, nil, nil
	}
	real, err := l.host.Checkpoint()
	if err != nil {
		return false, nil, err
	}
	state := l.answer(real)
	self := l.host.ID()
	resp := snapshot.Response{Gather: req.Gather, CR: req.CR, CN: req.CR, Encoding: snapshot.EncodingRaw,
		Hash: snapshotHash(state), RawLen: uint32(len(state)), State: state}
	var out []node.Envelope
	for _, m := range req.Members {
		resp.Channels = append(resp.Channels, snapshot.ChannelRecord{From: m, Flags: snapshot.FlagComplete})
		if m != in.From && m != self {
			out = append(out, node.Envelope{From: self, To: m, CN: req.CR, Msg: snapshot.Marker{Gather: req.Gather}})
		}
	}
	return false, append(out, node.Envelope{From: self, To: in.From, CN: req.CR, Msg: resp}), nil
}

// snapshotHash is the snapshot protocol's checkpoint hash (xxh3, 0 read
// as 1).
func snapshotHash(b []byte) uint64 {
	if h := xxh3.Hash(b); h != 0 {
		return h
	}
	return 1
}

// hostileListener listens on loopback as node id: it answers every
// connection's hello with its own (label "test") and reads and drops what
// follows, so a node can dial the ID a hostile peer claims. It returns the
// address; the test's cleanup closes everything.
func hostileListener(t *testing.T, id node.ID) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	done := make(chan struct{})
	conns := make(chan net.Conn, 64)
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case conns <- conn:
			default:
				conn.Close()
				continue
			}
			go func() {
				conn.SetDeadline(time.Now().Add(5 * time.Second))
				if _, err := readHelloFrame(conn); err == nil {
					writeHelloFrame(conn, hello{kind: helloData, id: id, label: "test", service: addr, gossip: addr})
					conn.SetDeadline(time.Time{})
					io.Copy(io.Discard, conn)
				}
				conn.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for {
			select {
			case c := <-conns:
				c.Close()
			default:
				return
			}
		}
	})
	return addr
}
