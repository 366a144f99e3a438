package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// proc is one `crystalball node` process, restarted in place (same ports,
// same data directory) after each kill.
type proc struct {
	id                   int
	listen, gossip, http string
	dataDir, log         string
	cmd                  *exec.Cmd
	done                 chan struct{}
	err                  error // Wait's, set before done closes
	killed               bool
}

// cluster is the crash test's processes, driven from one goroutine.
type cluster struct {
	bin   string
	args  []string // the flags every node gets
	procs []*proc
	http  *http.Client
}

// newCluster lays out n nodes on free loopback ports, each with its own
// data directory under dir.
func newCluster(bin, dir string, n int, args []string) (*cluster, error) {
	ports, err := freePorts(3 * n)
	if err != nil {
		return nil, err
	}
	c := &cluster{bin: bin, args: args, http: &http.Client{Timeout: 2 * time.Second}}
	for i := range n {
		addr := func(k int) string { return "127.0.0.1:" + strconv.Itoa(ports[3*i+k]) }
		c.procs = append(c.procs, &proc{id: i + 1, listen: addr(0), gossip: addr(1), http: addr(2),
			dataDir: filepath.Join(dir, fmt.Sprintf("n%d", i+1)), log: filepath.Join(dir, fmt.Sprintf("n%d.log", i+1))})
	}
	return c, nil
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var out []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("crash: %w", err)
		}
		defer ln.Close()
		out = append(out, ln.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// start starts p, joining through join (empty: a new cluster).
func (c *cluster) start(p *proc, join string) error {
	args := append([]string{"node", "--id", strconv.Itoa(p.id), "--listen", p.listen, "--gossip", p.gossip,
		"--http", p.http, "--log", "json", "--log-level", "warn"}, c.args...)
	if p.dataDir != "" {
		args = append(args, "--data-dir", p.dataDir)
	}
	if join != "" {
		args = append(args, "--join", join)
	}
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("crash: %w", err)
	}
	cmd := exec.Command(c.bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("crash: start n%d: %w", p.id, err)
	}
	p.cmd, p.done, p.killed, p.err = cmd, make(chan struct{}), false, nil
	done := p.done
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(done)
	}()
	return nil
}

// kill ends p with SIGKILL and waits for it to go.
func (c *cluster) kill(p *proc) {
	if !p.running() {
		return
	}
	p.killed = true
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// running reports whether p's process is up.
func (p *proc) running() bool {
	if p.done == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// exited returns the processes that ended without being killed, with why.
func (c *cluster) exited() []string {
	var out []string
	for _, p := range c.procs {
		if p.done != nil && !p.running() && !p.killed {
			out = append(out, fmt.Sprintf("n%d exited by itself (%v); log tail:\n%s", p.id, p.err, tail(p.log, 1500)))
		}
	}
	return out
}

// nodeStatus is the part of a node's /status the crash test reads.
type nodeStatus struct {
	Running bool            `json:"running"`
	State   json.RawMessage `json:"state"`
}

// status fetches p's /status (an error while it starts or after a kill).
func (c *cluster) status(p *proc) (nodeStatus, error) {
	var st nodeStatus
	resp, err := c.http.Get("http://" + p.http + "/status")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return st, err
	}
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("n%d: /status: %s", p.id, resp.Status)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("n%d: /status: %w", p.id, err)
	}
	return st, nil
}

// stopAll kills every process still running.
func (c *cluster) stopAll() {
	for _, p := range c.procs {
		c.kill(p)
	}
}

// tail returns the last n bytes of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
