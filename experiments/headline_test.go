package experiments

import (
	"encoding/json"
	"strings"
	"testing"
)

// A result leads with its figure beside the paper's, and declares the
// charts that carry it; the JSON carries both for 'crystalball serve'.
func TestHeadlinesStandBesideThePapers(t *testing.T) {
	px := &PaxosResult{Bug: "bug1", Runs: 10, AvoidedBySteering: 9, AvoidedByImmediateCheck: 1}
	px.Headline, px.Charts = paxosHeadline(px), paxosCharts(px)
	if h := px.Headline; h.Measured != "10 of 10 (100%): 9 by steering, 1 by the check; 0 violated" || !strings.HasPrefix(h.Paper, "98%: 87% by steering, 11% by the check; 2% violated") {
		t.Errorf("paxos headline %+v", h)
	}
	b, _ := json.Marshal(px)
	if !strings.Contains(string(b), `"headline":{"figure":`) || !strings.Contains(string(b), `"charts":[{"title":"How the violation was avoided in 10 runs","kind":"bars"`) {
		t.Errorf("paxos JSON: %s", b)
	}
	ch := &ChurnResult{Runs: []ChurnRun{{Config: "off", InconsistentStates: 3080}, {Config: "steer+immediate", InconsistentStates: 2739}}}
	if h := churnHeadline(ch); h.Measured != "3080 → 2739" || h.Paper != "121 → 0 (§5.4.1)" {
		t.Errorf("churn headline %+v", h)
	}
	bo := &BulletOverheadResult{Slowdown: BulletSlowdown{MedianPercent: 2.7}}
	bo.Without.Download.Median, bo.With.Download.Median = 256.1, 263
	if h := bulletHeadline(bo); !strings.HasPrefix(h.Measured, "+2.7% (median 256.1 s without, 263.0 s with)") {
		t.Errorf("bullet headline %+v", h)
	}
	if c := bulletCharts(bo); len(c) != 1 || c[0].Kind != "cdf" || c[0].Of != "nodes" {
		t.Errorf("bullet charts %+v", c)
	}
}
