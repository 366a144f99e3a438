package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/seed6eee2ec7/crystalball/status"
)

// nodeProc is one `crystalball node` process of the cluster, restarted in
// place after each kill.
type nodeProc struct {
	id                   int
	listen, http, gossip string
	log                  string // the process's stderr and stdout, appended across restarts

	cmd    *exec.Cmd
	pid    int
	killed bool          // this run of the process ends because we killed it
	done   chan struct{} // closed when the process exits
	starts int
}

// cluster runs the node processes. Its methods are safe for concurrent
// use: the churn loop kills and restarts while the sampler and the hostile
// peer read addresses.
type cluster struct {
	bin   string
	dir   string
	args  []string // extra flags of every node
	nodes []*nodeProc

	mu         sync.Mutex
	unexpected []string // exits nobody asked for, with their log tails
}

// newCluster lays out n nodes on loopback: node i listens on base+i, serves
// HTTP on base+1000+i and gossips on base+10000+i (the node's default).
func newCluster(bin, dir string, n, base int, args []string) *cluster {
	c := &cluster{bin: bin, dir: dir, args: args}
	for i := 1; i <= n; i++ {
		c.nodes = append(c.nodes, &nodeProc{
			id:     i,
			listen: "127.0.0.1:" + strconv.Itoa(base+i),
			http:   "127.0.0.1:" + strconv.Itoa(base+1000+i),
			gossip: "127.0.0.1:" + strconv.Itoa(base+10000+i),
			log:    filepath.Join(dir, fmt.Sprintf("n%d.log", i)),
		})
	}
	return c
}

// start starts node p, joining through join (empty: a new cluster).
func (c *cluster) start(p *nodeProc, join string) error {
	args := []string{"node", "--id", strconv.Itoa(p.id), "--listen", p.listen, "--http", p.http, "--log", "json", "--log-level", "warn"}
	if join != "" {
		args = append(args, "--join", join)
	}
	args = append(args, c.args...)
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("soak: %w", err)
	}
	cmd := exec.Command(c.bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("soak: starting n%d: %w", p.id, err)
	}
	c.mu.Lock()
	p.cmd, p.pid, p.killed, p.done = cmd, cmd.Process.Pid, false, make(chan struct{})
	p.starts++
	done := p.done
	c.mu.Unlock()
	go func() {
		err := cmd.Wait()
		f.Close()
		c.mu.Lock()
		if !p.killed {
			c.unexpected = append(c.unexpected, fmt.Sprintf("n%d (pid %d) exited by itself: %v; log tail:\n%s", p.id, cmd.Process.Pid, err, tail(p.log, 2048)))
		}
		c.mu.Unlock()
		close(done)
	}()
	return nil
}

// kill ends node p with SIGKILL and waits for the process to go.
func (c *cluster) kill(p *nodeProc) {
	c.mu.Lock()
	p.killed = true
	cmd, done := p.cmd, p.done
	c.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

// alive reports whether p's process is running.
func (c *cluster) alive(p *nodeProc) bool {
	c.mu.Lock()
	done := p.done
	c.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// pick returns a random running node other than not (nil: none).
func (c *cluster) pick(r *rand.Rand, not *nodeProc) *nodeProc {
	var live []*nodeProc
	for _, p := range c.nodes {
		if p != not && c.alive(p) {
			live = append(live, p)
		}
	}
	if len(live) == 0 {
		return nil
	}
	return live[r.IntN(len(live))]
}

// stopAll ends every node (SIGKILL: the soak judges the run, not the exit).
func (c *cluster) stopAll() {
	for _, p := range c.nodes {
		if c.alive(p) {
			c.kill(p)
		}
	}
}

// failures returns the unexpected exits so far.
func (c *cluster) failures() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.unexpected...)
}

// churn kills a random node every 1/rate on average (exponential gaps),
// keeps it down for downtime and restarts it through another live node,
// until stop is closed. While it is down, it asks another live node every
// 250ms whether memberlist has declared it dead, and records how long that
// took (det).
func (c *cluster) churn(r *rand.Rand, every, downtime time.Duration, stop <-chan struct{}, kills *int, det *detection) {
	client := &http.Client{Timeout: time.Second}
	for {
		gap := time.Duration(r.ExpFloat64() * float64(every))
		select {
		case <-stop:
			return
		case <-time.After(gap):
		}
		p := c.pick(r, nil)
		if p == nil {
			continue
		}
		c.kill(p)
		killed := time.Now()
		*kills++
		witness := c.pick(r, p)
		seen := false
		for !seen && time.Since(killed) < downtime {
			select {
			case <-stop:
				return
			case <-time.After(250 * time.Millisecond):
			}
			if witness != nil && seenDead(client, witness, p.id) {
				seen = true
				det.add(time.Since(killed))
			}
		}
		if !seen {
			det.Undetected++
		}
		select {
		case <-stop:
		case <-time.After(downtime - time.Since(killed)):
		}
		join := ""
		if q := c.pick(r, p); q != nil {
			join = q.listen
		}
		if err := c.start(p, join); err != nil {
			c.mu.Lock()
			c.unexpected = append(c.unexpected, err.Error())
			c.mu.Unlock()
		}
	}
}

// seenDead reports whether node w's /status shows peer id not alive.
func seenDead(client *http.Client, w *nodeProc, id int) bool {
	var doc status.StatusDoc
	if err := getJSON(context.Background(), client, "http://"+w.http+"/status", &doc); err != nil {
		return false
	}
	for _, p := range doc.Peers {
		if int(p.ID) == id {
			return !p.Alive
		}
	}
	return true // forgotten counts as dead
}

// detection is how long the cluster took to see killed nodes dead.
type detection struct {
	Seen       int             `json:"seen"`
	Undetected int             `json:"unseen_within_downtime"`
	Delays     []time.Duration `json:"delays_ns"`
}

func (d *detection) add(dt time.Duration) {
	d.Seen++
	d.Delays = append(d.Delays, dt)
}

// Median and Max are the detection delays' (zero without any).
func (d detection) Median() time.Duration {
	if len(d.Delays) == 0 {
		return 0
	}
	s := slices.Clone(d.Delays)
	slices.Sort(s)
	return s[len(s)/2].Round(10 * time.Millisecond)
}

func (d detection) Max() time.Duration {
	if len(d.Delays) == 0 {
		return 0
	}
	return slices.Max(d.Delays).Round(10 * time.Millisecond)
}

// tail returns the last n bytes of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}
