package main

import (
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// The attacks of the second audit (docs/RESULTS.md, "Trust"), beside the
// first audit's in hostile.go: a checkpoint-number walk, Requests naming
// thousands of members nobody runs, steering requests of huge names, the
// inbound slots pinned from many loopback addresses, and cross-site and
// rebinding requests to the status server.

// walk sends a forged ID's n Probes stamped k·2^20, each jump within the
// window of the last.
func (h *hostile) walk(p *nodeProc, n int) error {
	conn, err := h.dial(p, hostileID+60, "127.0.0.1:9")
	if err != nil {
		return err
	}
	h.held = append(h.held, conn)
	_ = conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	for k := range uint64(n) {
		f, err := h.envelope(hostileID+60, p, (k+1)*snapshot.DefaultCNWindow, randtree.Probe{Root: 1})
		if err != nil {
			return err
		}
		if _, err := conn.Write(f); err != nil {
			return nil // the node cut the walker: what the sampler judges
		}
	}
	return nil
}

// forgedMembers sends n snapshot Requests from a stranger, each naming
// 1,000 members nobody runs.
func (h *hostile) forgedMembers(p *nodeProc, n int) error {
	conn, err := h.dial(p, hostileID+61, "127.0.0.1:9")
	if err != nil {
		return err
	}
	h.held = append(h.held, conn)
	_ = conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	base := h.r.IntN(1 << 20)
	for i := range n {
		members := []node.ID{node.ID(p.id), hostileID + 61}
		for j := range 1000 {
			members = append(members, node.ID(2_000_000+base+1000*i+j))
		}
		req := snapshot.Request{Gather: uint64(i + 1), CR: 1, Members: sortIDs(members)}
		f, err := h.envelope(hostileID+61, p, 1, req)
		if err != nil {
			return err
		}
		if _, err := conn.Write(f); err != nil {
			return nil
		}
	}
	return nil
}

func sortIDs(ids []node.ID) []node.ID {
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
	return ids
}

// steerStrings sends n steering Requests whose names are about 300 KB of
// terminal escapes each.
func (h *hostile) steerStrings(p *nodeProc, n int) error {
	conn, err := h.dial(p, hostileID+62, "127.0.0.1:9")
	if err != nil {
		return err
	}
	h.held = append(h.held, conn)
	_ = conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	huge := strings.Repeat("\x1b[2J", 75<<10)
	for i := range n {
		req := steering.Request{ID: uint64(i), Property: huge, Kind: "safety",
			Filter: steering.Filter{Kind: steering.FilterTimer, Node: node.ID(p.id), Timer: huge},
			Path:   []consequence.ActionRecord{{Kind: "timer", Node: node.ID(p.id), Timer: "recovery"}}}
		f, err := h.envelope(hostileID+62, p, 0, req)
		if err != nil {
			return err
		}
		if _, err := conn.Write(f); err != nil {
			return nil
		}
	}
	return nil
}

// pinSlots holds up to n inbound connections to p from nine loopback
// addresses (127.0.0.2 to .10), each with a hello of an ID nobody
// confirmed and nothing more: the node's slots, but for what confirmed
// peers need.
func (h *hostile) pinSlots(p *nodeProc, n int) error {
	for i := range n {
		local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i%9))}
		d := net.Dialer{LocalAddr: local, Timeout: 2 * time.Second}
		conn, err := d.Dial("tcp", p.listen)
		if err != nil {
			return nil // refused: the limits hold
		}
		h.held = append(h.held, conn)
		_ = conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
		if _, err := conn.Write(hello(node.ID(hostileID+1000+i), h.label, "", "127.0.0.1:9")); err != nil {
			continue
		}
		go func() { _, _ = io.Copy(io.Discard, conn) }()
	}
	return nil
}

// crossSite sends the status server a rebinding GET (a foreign Host) and
// a cross-site POST /snapshot, n of each.
func (h *hostile) crossSite(p *nodeProc, n int) error {
	for range n {
		conn, err := net.DialTimeout("tcp", p.http, 2*time.Second)
		if err != nil {
			return nil
		}
		h.held = append(h.held, conn)
		_ = conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
		fmt.Fprintf(conn, "GET /status HTTP/1.1\r\nHost: rebind.attacker.example\r\n\r\n")
		fmt.Fprintf(conn, "POST /snapshot HTTP/1.1\r\nHost: %s\r\nOrigin: http://attacker.example\r\nContent-Length: 0\r\n\r\n", p.http)
		go func() { _, _ = io.Copy(io.Discard, conn) }()
	}
	return nil
}
