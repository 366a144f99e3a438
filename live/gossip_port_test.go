package live

import (
	"context"
	"net"
	"strconv"
	"testing"

	"github.com/hashicorp/memberlist"
	"github.com/seed6eee2ec7/crystalball/live/livetest"

	"go.uber.org/zap"
)

func TestDefaultGossipBind(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:7001":  "127.0.0.1:17001",
		"127.0.0.1:55535": "127.0.0.1:65535",
		"10.0.0.1:55536":  "10.0.0.1:45536",
		"[::1]:65535":     "[::1]:55535",
		"127.0.0.1:0":     "127.0.0.1:0",
		":7000":           ":17000",
		"7000":            "",
		"host:http":       "",
		"host:70000":      "",
	} {
		if got := DefaultGossipBind(in); got != want {
			t.Errorf("DefaultGossipBind(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRuntimeGossipAddressSurvivesRestart: a node restarted on the same
// service address gossips from the same address (RuntimeConfig.Gossip.Bind's
// default), and its peer sees it alive there again: the same member, not a
// second one with a conflicting address.
func TestRuntimeGossipAddressSurvivesRestart(t *testing.T) {
	t.Cleanup(func() { livetest.VerifyNone(t) })
	n1 := startNoteNode(t, 1, zap.NewNop())
	listen := listenWithFreeGossip(t)
	n2 := startNoteNodeWith(t, 2, zap.NewNop(), func(c *RuntimeConfig) { c.Listen = listen }, n1.Addr())
	gossip := n2.GossipAddr()
	if want := DefaultGossipBind(listen); gossip != want {
		t.Fatalf("n2 listening on %s gossips from %s, want %s", listen, gossip, want)
	}
	waitFor(t, "n1 to see n2", func() bool { return memberState(n1, 2) == memberlist.StateAlive })
	if err := n2.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to see n2 leave", func() bool { return memberState(n1, 2) != memberlist.StateAlive })

	n2 = startNoteNodeWith(t, 2, zap.NewNop(), func(c *RuntimeConfig) { c.Listen = listen }, n1.Addr())
	if got := n2.GossipAddr(); got != gossip {
		t.Errorf("restarted n2 gossips from %s, before from %s", got, gossip)
	}
	waitFor(t, "n1 to see the restarted n2 alive", func() bool { return memberState(n1, 2) == memberlist.StateAlive })
	for _, m := range n1.ml.Members() {
		if m.Name == "n2" && m.Address() != gossip {
			t.Errorf("n1 has n2 at %s, want %s", m.Address(), gossip)
		}
	}
	n2.Stop(context.Background())
	n1.Stop(context.Background())
}

// memberState is r's memberlist state of node id; StateDead when r has no
// such member.
func memberState(r *Runtime, id int) memberlist.NodeStateType {
	for _, m := range r.ml.Members() {
		if m.Name == "n"+strconv.Itoa(id) {
			return m.State
		}
	}
	return memberlist.StateDead
}

// listenWithFreeGossip returns a loopback service address whose port and
// derived gossip port (TCP and UDP) were free a moment ago.
func listenWithFreeGossip(t *testing.T) string {
	t.Helper()
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		listen := ln.Addr().String()
		gossip := DefaultGossipBind(listen)
		gl, err := net.Listen("tcp", gossip)
		if err == nil {
			pc, err := net.ListenPacket("udp", gossip)
			if err == nil {
				pc.Close()
				gl.Close()
				ln.Close()
				return listen
			}
			gl.Close()
		}
		ln.Close()
	}
	t.Fatal("no free service port with a free gossip port")
	return ""
}
