package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/status"
)

// sample is what one node showed at one moment.
type sample struct {
	// OK is set when /status answered; the rest is zero otherwise.
	OK            bool
	RSS           int64 // resident bytes (/proc)
	FDs           int   // open files (/proc)
	Goroutines    int   // go_goroutines (/metrics)
	CN            uint64
	Gathers       int64
	GathersFailed int64
	CNRejected    int64
	// Peers is how many peers the node's directory holds (memberlist's
	// members and hello-learned IDs); ReportFiles its report files kept
	// (crystalball_reports_files).
	Peers       int
	ReportFiles int
	State       *randtree.State
	// Line is the node's tree state, its filters and its timers, for the
	// trail (sampler.trail): how the tree stood at every sample.
	Line string
}

// maxStatusBytes bounds what the soak reads of a node's answer: the soak
// must not be the process that runs out of memory.
const maxStatusBytes = 8 << 20

// take samples node p (pid: its process, 0 if down).
func take(ctx context.Context, client *http.Client, p *nodeProc, pid int) sample {
	var s sample
	if pid > 0 {
		s.RSS, s.FDs = procFigures(pid)
	}
	var doc status.StatusDoc
	if err := getJSON(ctx, client, "http://"+p.http+"/status", &doc); err != nil {
		return s
	}
	s.OK = true
	if doc.Snapshots != nil {
		st := doc.Snapshots.Stats
		s.CN, s.Gathers, s.GathersFailed, s.CNRejected = doc.Snapshots.CN, st.Gathers, st.GathersFailed, st.CNRejected
	}
	if len(doc.State) > 0 {
		var rt randtree.State
		if json.Unmarshal(doc.State, &rt) == nil {
			s.State = &rt
		}
	}
	s.Line = doc.Summary
	if doc.Steering != nil && len(doc.Steering.Filters) > 0 {
		s.Line += fmt.Sprintf(" filters=%q", doc.Steering.Filters)
	}
	var timers []string
	for name := range doc.Timers {
		timers = append(timers, name)
	}
	slices.Sort(timers)
	s.Line += fmt.Sprintf(" timers=%v", timers)
	s.Peers = len(doc.Peers)
	s.Goroutines = metricValue(ctx, client, "http://"+p.http+"/metrics", "go_goroutines")
	s.ReportFiles = metricValue(ctx, client, "http://"+p.http+"/metrics", "crystalball_reports_files")
	return s
}

// getJSON decodes the body of a GET of url into v.
func getJSON(ctx context.Context, client *http.Client, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return json.NewDecoder(http.MaxBytesReader(nil, resp.Body, maxStatusBytes)).Decode(v)
}

// metricValue returns the value of an unlabelled metric from a Prometheus
// text page, or 0.
func metricValue(ctx context.Context, client *http.Client, url, name string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(http.MaxBytesReader(nil, resp.Body, maxStatusBytes))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int(f)
		}
	}
	return 0
}

// procFigures reads a process's resident memory and open files from /proc.
func procFigures(pid int) (rss int64, fds int) {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				rss = kb << 10
			}
		}
	}
	if es, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
		fds = len(es)
	}
	return rss, fds
}

// sampler samples every node each period and keeps the figures.
type sampler struct {
	c      *cluster
	client *http.Client
	rounds [][]sample // per sampling round, per node (index id-1)
	times  []time.Duration
	// trail, when set, gets every round's tree states (trail.txt in the
	// soak's directory): what to trace a tree that never re-forms with.
	trail io.Writer
}

func newSampler(c *cluster) *sampler {
	return &sampler{c: c, client: &http.Client{Timeout: 3 * time.Second}}
}

// round samples every node once, at offset at from the start.
func (s *sampler) round(ctx context.Context, at time.Duration) []sample {
	out := make([]sample, len(s.c.nodes))
	for i, p := range s.c.nodes {
		pid := 0
		if s.c.alive(p) {
			s.c.mu.Lock()
			pid = p.pid
			s.c.mu.Unlock()
		}
		out[i] = take(ctx, s.client, p, pid)
	}
	s.rounds = append(s.rounds, out)
	s.times = append(s.times, at)
	if s.trail != nil {
		fmt.Fprintf(s.trail, "== %v\n", at.Round(time.Second))
		for i, x := range out {
			if !x.OK {
				fmt.Fprintf(s.trail, "n%d: down\n", i+1)
				continue
			}
			fmt.Fprintf(s.trail, "n%d: %s\n", i+1, x.Line)
		}
	}
	return out
}
