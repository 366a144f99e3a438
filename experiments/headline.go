package experiments

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/webview"
)

// Headline is an experiment's figure as a person reads it first, beside
// the paper's: the "headline" of the experiments' --json results, which
// 'crystalball serve' puts at the top of an experiment's page.
type Headline = webview.Headline

// paperPaxos are §5.4.2's figures per bug: avoided by steering, by the
// immediate check, violated (of 100 runs).
var paperPaxos = map[string][3]int{"bug1": {87, 11, 2}, "bug2": {85, 11, 5}}

// paxosHeadline is the paxos experiment's headline.
func paxosHeadline(r *PaxosResult) Headline {
	avoided := r.AvoidedBySteering + r.AvoidedByImmediateCheck
	h := Headline{Figure: "runs in which CrystalBall avoided the violation (by steering, by the immediate check)",
		Measured: fmt.Sprintf("%d of %d (%s): %d by steering, %d by the check; %d violated", avoided, r.Runs, percent(avoided, r.Runs),
			r.AvoidedBySteering, r.AvoidedByImmediateCheck, r.Violated)}
	if p, ok := paperPaxos[r.Bug]; ok {
		h.Paper = fmt.Sprintf("%d%%: %d%% by steering, %d%% by the check; %d%% violated (§5.4.2, %s)", p[0]+p[1], p[0], p[1], p[2], r.Bug)
	}
	return h
}

// bulletHeadline is the bullet-overhead experiment's headline.
func bulletHeadline(r *BulletOverheadResult) Headline {
	return Headline{Figure: "how much CrystalBall slows the median download of a 20 MB file",
		Measured: fmt.Sprintf("%+.1f%% (median %.1f s without, %.1f s with)", r.Slowdown.MedianPercent, r.Without.Download.Median, r.With.Download.Median),
		Paper:    "less than 5% on a quiet CPU, less than 10% overall (§5.5, Fig. 17)"}
}

// churnHeadline is the randtree-churn experiment's headline.
func churnHeadline(r *ChurnResult) Headline {
	h := Headline{Figure: "inconsistent states over the run: without CrystalBall → with steering and the immediate check",
		Paper: "121 → 0 (§5.4.1)"}
	states := map[string]int64{}
	for _, run := range r.Runs {
		states[run.Config] = run.InconsistentStates
	}
	off, okOff := states["off"]
	steer, okSteer := states["steer+immediate"]
	switch {
	case okOff && okSteer:
		h.Measured = fmt.Sprintf("%d → %d", off, steer)
	case okOff:
		h.Measured = fmt.Sprintf("%d without CrystalBall (steering not run)", off)
	case okSteer:
		h.Measured = fmt.Sprintf("%d with steering (the run without CrystalBall not run)", steer)
	}
	return h
}

// percent renders n of total as a whole percentage.
func percent(n, total int) string {
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(max(total, 1)))
}

// paxosCharts are the paxos experiment's figures: how each run ended,
// and the runs violated in each configuration.
func paxosCharts(r *PaxosResult) []webview.Chart {
	return []webview.Chart{
		{Title: fmt.Sprintf("How the violation was avoided in %d runs", r.Runs), Kind: "bars", YLabel: "runs",
			Labels: []string{"by steering", "by the check", "violated"},
			Values: []float64{float64(r.AvoidedBySteering), float64(r.AvoidedByImmediateCheck), float64(r.Violated)}},
		{Title: "Runs violated, by configuration", Kind: "bars", YLabel: "runs",
			Labels: []string{"without", "check alone", "steering+check"},
			Values: []float64{float64(r.ViolatedWithoutCrystalBall), float64(r.ViolatedImmediateOnly), float64(r.Violated)}},
	}
}

// bulletCharts is Figure 17: the CDF of both runs' download times.
func bulletCharts(r *BulletOverheadResult) []webview.Chart {
	return []webview.Chart{{Title: "Download completion times (Fig. 17)", Kind: "cdf", XLabel: "download time (s)", Of: "nodes",
		Series: []webview.Series{{Name: "without CrystalBall", Values: r.Without.Download.Sorted}, {Name: "with CrystalBall", Values: r.With.Download.Sorted}}}}
}

// churnCharts are the inconsistent states of each configuration.
func churnCharts(r *ChurnResult) []webview.Chart {
	c := webview.Chart{Title: "Inconsistent states, by configuration", Kind: "bars", YLabel: "states"}
	for _, run := range r.Runs {
		c.Labels = append(c.Labels, run.Config)
		c.Values = append(c.Values, float64(run.InconsistentStates))
	}
	if len(c.Values) == 0 {
		return nil
	}
	return []webview.Chart{c}
}

// livenessHeadline is the randtree-liveness experiment's headline. The
// papers report no online figure for this bug (MaceMC finds it offline,
// §6): the paper's column says so.
func livenessHeadline(r *RandTreeLivenessResult) Headline {
	return Headline{Figure: "runs left with a parent keeping a child for ever: without CrystalBall → steered (predicted in time)",
		Measured: fmt.Sprintf("%d → %d of %d (%d predicted in time)", r.Bitten, r.SteeredBitten, len(r.Runs), r.Predicted),
		Paper:    "no online figure: MaceMC finds the bug offline (§6)"}
}

// livenessCharts are the runs bitten in each configuration.
func livenessCharts(r *RandTreeLivenessResult) []webview.Chart {
	return []webview.Chart{{Title: fmt.Sprintf("Runs that end with ParentChildAgree failing, of %d", len(r.Runs)), Kind: "bars", YLabel: "runs",
		Labels: []string{"without", "predicted in time", "steered"},
		Values: []float64{float64(r.Bitten), float64(r.Predicted), float64(r.SteeredBitten)}}}
}
