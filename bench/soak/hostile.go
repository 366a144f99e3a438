package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"time"

	"github.com/seed6eee2ec7/crystalball/live"
	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// hostile is the soak's attacker: a peer on loopback that speaks the
// transport's wire format (live's hello, node's frames and envelopes) and
// lies, floods and stalls. Each attack counts as done when its bytes were
// written; whether the target coped is what the sampler judges.
type hostile struct {
	c     *cluster
	reg   *node.Registry
	label string
	r     *rand.Rand
	// Counts of each attack made.
	Counts map[string]int
	// held are connections an attack keeps open until the next round.
	held []net.Conn
	// attacks are the attacks run cycles through (nil: all).
	attacks []string
}

// hostileID is the first node ID the attacker claims for itself: above any
// node of the cluster.
const hostileID = 900

func newHostile(c *cluster, label string, r *rand.Rand) (*hostile, error) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	msgs := append(append(append([]node.Message(nil), spec.Messages...), snapshot.Messages()...), steering.Messages()...)
	reg, err := node.NewRegistry(msgs...)
	if err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	return &hostile{c: c, reg: reg, label: label, r: r, Counts: map[string]int{}}, nil
}

// attacks, in the order the rounds cycle through them.
var attacks = []string{"poison-cn", "spoof-hello", "idle-conns", "trickle", "big-frames", "gossip-garbage", "http-keepalive",
	"poison-cn-pair", "gossip-flood", "http-slow-body",
	"cn-walk", "forged-members", "steer-strings", "pin-slots", "cross-site"}

// run makes one attack every period against random live nodes until ctx
// ends, then closes what it holds.
func (h *hostile) run(ctx context.Context, period time.Duration) {
	defer h.release()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(period):
		}
		h.release()
		target := h.c.pick(h.r, nil)
		if target == nil {
			continue
		}
		list := h.attacks
		if len(list) == 0 {
			list = attacks
		}
		name := list[i%len(list)]
		if err := h.attack(ctx, name, target); err == nil {
			h.Counts[name]++
		}
	}
}

func (h *hostile) attack(ctx context.Context, name string, p *nodeProc) error {
	switch name {
	case "poison-cn":
		return h.poison(p)
	case "spoof-hello":
		return h.spoof(p)
	case "idle-conns":
		return h.idle(p, 300)
	case "trickle":
		return h.trickle(ctx, p)
	case "big-frames":
		return h.big(p, 10)
	case "gossip-garbage":
		return h.garbage(p, 20_000)
	case "http-keepalive":
		return h.keepalive(p, 300)
	case "poison-cn-pair":
		return h.poisonPair(p)
	case "gossip-flood":
		return h.flood(p, 20_000)
	case "http-slow-body":
		return h.slowBody(ctx, p, 300)
	case "cn-walk":
		return h.walk(p, 2000)
	case "forged-members":
		return h.forgedMembers(p, 20)
	case "steer-strings":
		return h.steerStrings(p, 16)
	case "pin-slots":
		return h.pinSlots(p, 1100)
	case "cross-site":
		return h.crossSite(p, 20)
	}
	return fmt.Errorf("soak: unknown attack %q", name)
}

// hello is live's handshake frame: "CBH1" | kind | uvarint id | label |
// gossip address | service address (each uvarint length-prefixed).
func hello(id node.ID, label, gossip, service string) []byte {
	b := append([]byte("CBH1"), 1) // a data connection
	b = binary.AppendUvarint(b, uint64(id))
	for _, s := range []string{label, gossip, service} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return live.AppendFrame(nil, b)
}

// dial opens a data connection to p claiming id.
func (h *hostile) dial(p *nodeProc, id node.ID, service string) (net.Conn, error) {
	conn, err := net.DialTimeout("tcp", p.listen, 2*time.Second)
	if err != nil {
		return nil, err
	}
	_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write(hello(id, h.label, "", service)); err != nil {
		conn.Close()
		return nil, err
	}
	go func() { _, _ = io.Copy(io.Discard, conn) }() // read the answer hello; ends when closed
	return conn, nil
}

// envelope frames msg from the attacker to p with checkpoint number cn.
func (h *hostile) envelope(from node.ID, p *nodeProc, cn uint64, msg node.Message) ([]byte, error) {
	b, err := h.reg.AppendEnvelope(nil, node.Envelope{From: from, To: node.ID(p.id), CN: cn, Msg: msg})
	if err != nil {
		return nil, err
	}
	return live.AppendFrame(nil, b), nil
}

// poison sends a Probe stamped with checkpoint number 2^62.
func (h *hostile) poison(p *nodeProc) error {
	conn, err := h.dial(p, hostileID, "127.0.0.1:9")
	if err != nil {
		return err
	}
	h.held = append(h.held, conn)
	f, err := h.envelope(hostileID, p, 1<<62, randtree.Probe{Root: 1})
	if err != nil {
		return err
	}
	_, err = conn.Write(f)
	return err
}

// spoof claims another live node's ID from the attacker's address.
func (h *hostile) spoof(p *nodeProc) error {
	victim := h.c.pick(h.r, p)
	if victim == nil {
		return fmt.Errorf("soak: no node to impersonate")
	}
	conn, err := h.dial(p, node.ID(victim.id), "127.0.0.1:9")
	if err != nil {
		return err
	}
	h.held = append(h.held, conn)
	return nil
}

// idle opens n connections with a hello each and sends nothing more.
func (h *hostile) idle(p *nodeProc, n int) error {
	for i := range n {
		conn, err := h.dial(p, node.ID(hostileID+1+i), "127.0.0.1:9")
		if err != nil {
			return err
		}
		h.held = append(h.held, conn)
	}
	return nil
}

// trickle sends a frame's bytes one a second for a minute.
func (h *hostile) trickle(ctx context.Context, p *nodeProc) error {
	conn, err := h.dial(p, hostileID, "127.0.0.1:9")
	if err != nil {
		return err
	}
	h.held = append(h.held, conn)
	f, err := h.envelope(hostileID, p, 0, randtree.Probe{Root: 1})
	if err != nil {
		return err
	}
	go func() {
		for _, b := range f {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			if _, err := conn.Write([]byte{b}); err != nil {
				return
			}
		}
	}()
	return nil
}

// big sends n frames of about 1 MB: a JoinReply with 200,000 siblings.
func (h *hostile) big(p *nodeProc, n int) error {
	sibs := make([]node.ID, 200_000)
	for i := range sibs {
		sibs[i] = node.ID(1_000_000 + i)
	}
	f, err := h.envelope(hostileID, p, 0, randtree.JoinReply{Root: 1, Siblings: sibs})
	if err != nil {
		return err
	}
	for range n {
		conn, err := h.dial(p, hostileID, "127.0.0.1:9")
		if err != nil {
			return err
		}
		h.held = append(h.held, conn)
		_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		_, _ = conn.Write(f)
	}
	return nil
}

// garbage sends n random datagrams to p's gossip port.
func (h *hostile) garbage(p *nodeProc, n int) error {
	conn, err := net.Dial("udp", p.gossip)
	if err != nil {
		return err
	}
	defer conn.Close()
	b := make([]byte, 512)
	for range n {
		for i := range b {
			b[i] = byte(h.r.Uint32())
		}
		_, _ = conn.Write(b)
	}
	return nil
}

// keepalive opens n HTTP/1.1 connections to p's status server, makes one
// request on each and leaves them idle.
func (h *hostile) keepalive(p *nodeProc, n int) error {
	for range n {
		conn, err := net.DialTimeout("tcp", p.http, 2*time.Second)
		if err != nil {
			return err
		}
		h.held = append(h.held, conn)
		_, _ = io.WriteString(conn, "GET /metrics HTTP/1.1\r\nHost: soak\r\n\r\n")
		go func() { _, _ = io.Copy(io.Discard, conn) }()
	}
	return nil
}

// poisonPair sends a Probe stamped just below MaxCN from each of two
// forged IDs: two "peers" agreeing on a number beyond the window, which
// caught every node up to it before catch-ups needed witnesses.
func (h *hostile) poisonPair(p *nodeProc) error {
	for _, id := range []node.ID{hostileID + 50, hostileID + 51} {
		conn, err := h.dial(p, id, fmt.Sprintf("127.0.0.1:%d", 9+int(id)))
		if err != nil {
			return err
		}
		h.held = append(h.held, conn)
		f, err := h.envelope(id, p, 1<<62-5, randtree.Probe{Root: 1})
		if err != nil {
			return err
		}
		if _, err := conn.Write(f); err != nil {
			return err
		}
	}
	return nil
}

// flood sends n well-formed memberlist alive messages for members nobody
// can prove (their service addresses answer for nobody, or for another
// ID): before proofs, every one was admitted and probed.
func (h *hostile) flood(p *nodeProc, n int) error {
	conn, err := net.Dial("udp", p.gossip)
	if err != nil {
		return err
	}
	defer conn.Close()
	base := h.r.IntN(1 << 20)
	for i := range n {
		id := node.ID(10_000 + base + i)
		service := "127.0.0.1:9"
		if i%2 == 1 {
			service = p.listen // answers, as p
		}
		meta := binary.AppendUvarint([]byte{1}, uint64(id)) // live's metadata: version 1, ID, address
		meta = append(meta, service...)
		pkt, err := livetest.AliveGossip(h.label, id.String(), net.IPv4(127, 0, 0, 1), uint16(40_000+i%20_000), meta, 1)
		if err != nil {
			return err
		}
		_, _ = conn.Write(pkt)
		if i%500 == 499 {
			time.Sleep(10 * time.Millisecond) // let the node's reader keep up: a flood, not a loss test
		}
	}
	return nil
}

// slowBody opens n POSTs to p's status server whose bodies trickle in a
// byte a second for a minute (a slowloris on the body): each held a
// descriptor and a goroutine for as long as it liked before the server
// bounded a request's reading.
func (h *hostile) slowBody(ctx context.Context, p *nodeProc, n int) error {
	var conns []net.Conn
	for range n {
		conn, err := net.DialTimeout("tcp", p.http, 2*time.Second)
		if err != nil {
			break // the connection cap may refuse some
		}
		_, _ = io.WriteString(conn, "POST /snapshot HTTP/1.1\r\nHost: soak\r\nContent-Length: 60\r\n\r\n")
		go func() { _, _ = io.Copy(io.Discard, conn) }()
		h.held = append(h.held, conn)
		conns = append(conns, conn)
	}
	go func() {
		for range 60 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			for _, c := range conns {
				_ = c.SetWriteDeadline(time.Now().Add(time.Second))
				_, _ = c.Write([]byte{'x'})
			}
		}
	}()
	return nil
}

// release closes every connection an attack held.
func (h *hostile) release() {
	for _, c := range h.held {
		c.Close()
	}
	h.held = nil
}
