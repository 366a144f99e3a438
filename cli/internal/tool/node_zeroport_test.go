package tool

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"
)

// zeroPortNode is one `crystalball node` run in the test's process
// (runNodeUntil, the CLI's own wiring) on ports the kernel picks: a port a
// test picked free and closed again can be taken by another test binary
// running side by side before the node binds it, and the node then exits
// at once with "address already in use".
type zeroPortNode struct {
	args        []string
	listen, web string // as the node reports them on stdout
	stdout, log *syncBuffer
	done        chan error
	exitErr     error // what done delivered, once exited saw it
	hasExited   bool
}

// zeroPortArgs are the address flags of an in-process node: every port 0.
var zeroPortArgs = []string{"--listen", "127.0.0.1:0", "--gossip", "127.0.0.1:0", "--http", "127.0.0.1:0"}

// zeroPortStartup is the line a node prints on stdout once it serves.
var zeroPortStartup = regexp.MustCompile(`on (\S+), gossip \S+, status http://(\S+)/status`)

// startZeroPortNode runs `crystalball node` with args (and zeroPortArgs) until
// ctx ends, and waits until it reports its addresses.
func startZeroPortNode(t *testing.T, ctx context.Context, deadline time.Time, args ...string) *zeroPortNode {
	t.Helper()
	p := &zeroPortNode{args: append(append([]string{}, args...), zeroPortArgs...),
		stdout: &syncBuffer{}, log: &syncBuffer{}, done: make(chan error, 1)}
	go func() { p.done <- runNodeUntil(ctx, testCatalog(), p.args, p.stdout, p.log) }()
	for {
		if m := zeroPortStartup.FindStringSubmatch(p.stdout.String()); m != nil {
			p.listen, p.web = m[1], m[2]
			return p
		}
		if err := p.exited(); err != nil {
			t.Fatalf("node %v: %v\n%s", p.args, err, p.log)
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %v reported no addresses before the deadline:\n%s", p.args, p.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exited returns why the node ended, or nil while it runs. It is called
// from the test's goroutine only.
func (p *zeroPortNode) exited() error {
	if !p.hasExited {
		select {
		case p.exitErr = <-p.done:
			p.hasExited = true
		default:
			return nil
		}
	}
	if p.exitErr == nil {
		return fmt.Errorf("exited cleanly before it was cancelled")
	}
	return p.exitErr
}

// wait waits up to limit for the node to end after its context was
// cancelled, and returns its error.
func (p *zeroPortNode) wait(limit time.Duration) error {
	if p.hasExited {
		return p.exitErr
	}
	select {
	case err := <-p.done:
		p.exitErr, p.hasExited = err, true
		return err
	case <-time.After(limit): // a hang guard
		return fmt.Errorf("did not stop within %v", limit)
	}
}
