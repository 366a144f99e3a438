// Command livecost measures what crystalball's live runtime costs a live
// cluster (`make livecost`; docs/PERFORMANCE.md, "The live cost"): it
// runs a cluster of live nodes in this process, over TCP on loopback,
// under a steady workload, plain, with snapshots and `--immediate` (the
// immediate safety check before every event, no rounds) and with
// snapshots and `--mode steer --immediate` (rounds and filters too), in
// rotating phases, and reports for each: CPU per event, the p50 and p99 latency of a handled event
// (from the first layer's Before to the last layer's After: the immediate
// check and the handler), and bytes on the wire per event.
//
// The service is MaceTransport (services/macetransport): each node's test
// application sends a message to the next node every -interval, which is
// acknowledged, so events arrive at a steady rate, and the service has
// safety properties for the immediate check to evaluate.
//
//	go run ./bench/livecost [-nodes 5] [-rounds 3] [-phase 20s] [-json]
//
// It is not a test: its figures depend on the machine and its load. Run
// it on a quiet machine and quote the load it prints.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	cfg := defaultConfig()
	fs := flag.NewFlagSet("livecost", flag.ContinueOnError)
	fs.IntVar(&cfg.Nodes, "nodes", cfg.Nodes, "nodes in the cluster")
	fs.IntVar(&cfg.Rounds, "rounds", cfg.Rounds, "phases of each configuration, rotating (plain, immediate, steered, then immediate, steered, plain, ...)")
	fs.DurationVar(&cfg.Phase, "phase", cfg.Phase, "measured time of a phase (after -warmup)")
	fs.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "time a phase's cluster runs before it is measured")
	fs.DurationVar(&cfg.Interval, "interval", cfg.Interval, "each node's application send interval (the workload)")
	fs.DurationVar(&cfg.Snapshots, "snapshots", cfg.Snapshots, "checkpoint and gather interval of the steered cluster")
	fs.IntVar(&cfg.SteerStates, "steer-states", cfg.SteerStates, "state budget of each steering search")
	fs.DurationVar(&cfg.SteerTime, "steer-time", cfg.SteerTime, "wall-time budget of each steering search")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.deadline())
	defer cancel()
	rep, err := run(ctx, cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "livecost:", err)
		os.Exit(1)
	}
	if err := printReport(os.Stdout, rep, *asJSON); err != nil {
		fmt.Fprintln(os.Stderr, "livecost:", err)
		os.Exit(1)
	}
}

// printReport writes rep as a table, or as JSON.
func printReport(w io.Writer, rep *Report, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(w, "livecost: %s, %d nodes, %d phases of %v per configuration, load %s at the start, %s at the end\n",
		rep.Service, rep.Nodes, rep.Rounds, time.Duration(rep.PhaseSeconds*float64(time.Second)), rep.LoadStart, rep.LoadEnd)
	fmt.Fprintf(w, "%-9s %9s %10s %9s %11s %11s %11s %12s %12s %8s %8s %11s %8s %8s\n",
		"config", "events", "events/s", "CPU s/s", "CPU ns/ev", "p50 µs", "p99 µs", "wire B/ev", "layer B/ev", "rounds", "checks", "checkpoints", "filters", "held")
	for _, s := range []Summary{rep.Plain, rep.Immediate, rep.Steered} {
		fmt.Fprintf(w, "%-9s %9d %10.0f %9.3f %11.0f %11.1f %11.1f %12.1f %12.1f %8d %8d %11d %8d %8d\n",
			s.Config, s.Events, s.EventsPerSecond, s.CPUShare, s.CPUNanosPerEvent, s.P50Micros, s.P99Micros,
			s.WireBytesPerEvent, s.LayerBytesPerEvent, s.Rounds, s.ImmediateChecks, s.Checkpoints, s.FiltersInstalled, s.HeldBack)
	}
	for _, s := range []Summary{rep.Immediate, rep.Steered} {
		fmt.Fprintf(w, "%s / plain: CPU per event %.3fx (%+.1f%%), p50 %+.1f µs, p99 %+.1f µs, wire bytes per event %.3fx\n",
			s.Config, s.CPURatio, 100*(s.CPURatio-1), s.P50AddedMicros, s.P99AddedMicros, s.WireRatio)
	}
	return nil
}
