package tool

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/seed6eee2ec7/crystalball/emulation"
)

// livenessCost is what steering cost a steered run's liveness properties:
// how many hold on its final state, and on the final state of its control
// run — the same seed and schedule with crystalball off (no snapshots, no
// steering) — which ones hold there and not in the steered run (Lost).
// Both judge the properties as the run's own liveness results do
// (emulation.Result.Liveness, after healing).
type livenessCost struct {
	// Holds of Of liveness properties hold on the steered run's final
	// state.
	Holds int `json:"holds"`
	Of    int `json:"of"`
	// Control is set when the control run ran (emulate --control, the
	// default); UnsteeredHolds is how many hold on its final state, Cost
	// how many of those fail in the steered run (Lost, by name, in spec
	// order), ControlWallSeconds the control run's wall time.
	Control            bool     `json:"control"`
	UnsteeredHolds     int      `json:"unsteered_holds"`
	Cost               int      `json:"cost"`
	Lost               []string `json:"lost,omitempty"`
	ControlWallSeconds float64  `json:"control_wall_seconds,omitempty"`
}

// controlRun runs cfg, the steered run's configuration, with crystalball
// off: the same seed, service, workload, churn, breaks and lasting faults,
// without snapshots, steering or a trace.
func controlRun(ctx context.Context, cfg emulation.Config) (emulation.Result, error) {
	cfg.Snapshots, cfg.Steering = nil, nil
	cfg.Trace, cfg.TraceCauses, cfg.OnViolation = nil, false, nil
	em, err := emulation.New(cfg)
	if err != nil {
		return emulation.Result{}, fmt.Errorf("control run: %w", err)
	}
	res, err := em.Run(ctx)
	if err != nil {
		return res, fmt.Errorf("control run: %w", err)
	}
	return res, nil
}

// costOf compares the steered run's liveness results with the control
// run's (nil: none ran).
func costOf(steered []emulation.LivenessResult, control *emulation.Result) *livenessCost {
	c := &livenessCost{Of: len(steered)}
	held := map[string]bool{}
	for _, l := range steered {
		if l.Holds {
			c.Holds++
		}
		held[l.Name] = l.Holds
	}
	if control == nil {
		return c
	}
	c.Control, c.ControlWallSeconds = true, control.WallTime.Seconds()
	for _, l := range control.Liveness {
		if !l.Holds {
			continue
		}
		c.UnsteeredHolds++
		if !held[l.Name] {
			c.Cost++
			c.Lost = append(c.Lost, l.Name)
		}
	}
	return c
}

// printLivenessCost prints c's line of the summary: "liveness:  2 of 2
// hold (unsteered: 2 of 2); steering cost 0".
func printLivenessCost(w io.Writer, c *livenessCost) {
	if c == nil {
		return
	}
	if !c.Control {
		fmt.Fprintf(w, "  liveness:  %d of %d hold (no control run: --control=false)\n", c.Holds, c.Of)
		return
	}
	line := fmt.Sprintf("  liveness:  %d of %d hold (unsteered: %d of %d); steering cost %d", c.Holds, c.Of, c.UnsteeredHolds, c.Of, c.Cost)
	if len(c.Lost) > 0 {
		line += " (" + strings.Join(c.Lost, ", ") + ")"
	}
	fmt.Fprintln(w, line)
}
