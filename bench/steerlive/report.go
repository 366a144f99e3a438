package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Format names the format of the totals line (Totals).
const Format = "crystalball-steerlive/1"

// Row is one seed of a target: per mode (in the plan's order), the
// liveness and bounded properties holding at the end, the safety
// violations and the outages; per steered mode (every mode but off), the
// properties steering cost (held at the end off, failed steered) and the
// share of actions it changed.
type Row struct {
	Seed       uint64    `json:"seed"`
	Held       []int     `json:"held"`
	Violations []int64   `json:"violations"`
	Outages    []int64   `json:"outages"`
	Cost       []int     `json:"cost"`
	ChangedPct []float64 `json:"changed_pct"`
}

// Availability is a property's mean availability over the seeds, per mode.
type Availability struct {
	Name string    `json:"name"`
	Mean []float64 `json:"mean"`
}

// ServiceReport scores one target over the plan's seeds. The slices of
// per-steered-mode figures are in the order of the plan's modes after
// off.
type ServiceReport struct {
	Target     Target `json:"target"`
	Properties int    `json:"properties"`
	Rows       []Row  `json:"rows"`
	// ViolatingOff counts the seeds whose off run violated a safety
	// property; per steered mode, Prevented those of them whose steered
	// run did not, and Caused the seeds whose steered run violated one
	// and the off run did not.
	ViolatingOff int   `json:"violating_off"`
	Prevented    []int `json:"prevented"`
	Caused       []int `json:"caused"`
	// Cost sums the rows' costs, CostSeeds counts the seeds with one.
	Cost      []int `json:"cost"`
	CostSeeds []int `json:"cost_seeds"`
	// Interventions and Handled sum the steered runs' (Record), per mode.
	Interventions []uint64       `json:"interventions"`
	Handled       []uint64       `json:"handled"`
	Availability  []Availability `json:"availability"`
	// Measured sums over the seeds, per mode (all modes): wall and
	// process CPU seconds of the runs, the seconds their steering rounds
	// took and the virtual minutes they emulated.
	Wall           []float64 `json:"wall_seconds"`
	CPU            []float64 `json:"cpu_seconds"`
	Rounds         []float64 `json:"round_seconds"`
	VirtualMinutes []float64 `json:"virtual_minutes"`
}

// Report is a plan's measurement: one ServiceReport per target.
type Report struct {
	Plan     Plan            `json:"plan"`
	Services []ServiceReport `json:"services"`
}

// steered are the plan's modes but off.
func (p Plan) steered() []Mode {
	return slices.DeleteFunc(slices.Clone(p.Modes), func(m Mode) bool { return m == Off })
}

// key identifies a run.
type key struct {
	target Target
	seed   uint64
	mode   Mode
}

// Score scores the plan's runs (every one of them must be in runs).
func Score(p Plan, runs []Record) (Report, error) {
	byKey := map[key]Record{}
	for _, r := range runs {
		byKey[key{r.Target, r.Seed, r.Mode}] = r
	}
	rep := Report{Plan: p}
	for _, t := range p.Targets {
		sr, err := scoreTarget(p, t, byKey)
		if err != nil {
			return Report{}, err
		}
		rep.Services = append(rep.Services, sr)
	}
	return rep, nil
}

// scoreTarget scores target t.
func scoreTarget(p Plan, t Target, runs map[key]Record) (ServiceReport, error) {
	steered := p.steered()
	sr := ServiceReport{Target: t, Prevented: make([]int, len(steered)), Caused: make([]int, len(steered)),
		Cost: make([]int, len(steered)), CostSeeds: make([]int, len(steered)),
		Interventions: make([]uint64, len(steered)), Handled: make([]uint64, len(steered)),
		Wall: make([]float64, len(p.Modes)), CPU: make([]float64, len(p.Modes)),
		Rounds: make([]float64, len(p.Modes)), VirtualMinutes: make([]float64, len(p.Modes))}
	avail := map[string][]float64{}
	var names []string
	for _, seed := range p.Seeds {
		off, ok := runs[key{t, seed, Off}]
		if !ok {
			return sr, fmt.Errorf("steerlive: no off run of %s seed %d", t.Label(), seed)
		}
		sr.Properties = len(off.Properties)
		row := Row{Seed: seed}
		for mi, m := range p.Modes {
			r, ok := runs[key{t, seed, m}]
			if !ok {
				return sr, fmt.Errorf("steerlive: no %s run of %s seed %d", m, t.Label(), seed)
			}
			row.Held = append(row.Held, r.held())
			row.Violations = append(row.Violations, r.Violations)
			row.Outages = append(row.Outages, r.outages())
			sr.Wall[mi] += r.WallSeconds
			sr.CPU[mi] += r.CPUSeconds
			sr.Rounds[mi] += r.RoundSeconds
			sr.VirtualMinutes[mi] += r.VirtualMinutes
			for _, v := range r.Properties {
				if _, seen := avail[v.Name]; !seen {
					avail[v.Name] = make([]float64, len(p.Modes))
					names = append(names, v.Name)
				}
				avail[v.Name][mi] += v.Availability / float64(len(p.Seeds))
			}
		}
		if off.Violations > 0 {
			sr.ViolatingOff++
		}
		for si, m := range steered {
			r := runs[key{t, seed, m}]
			cost := 0
			for _, v := range off.Properties {
				if held, ok := r.holds(v.Name); v.Holds && ok && !held {
					cost++
				}
			}
			row.Cost = append(row.Cost, cost)
			row.ChangedPct = append(row.ChangedPct, r.ChangedPct())
			sr.Cost[si] += cost
			if cost > 0 {
				sr.CostSeeds[si]++
			}
			switch {
			case off.Violations > 0 && r.Violations == 0:
				sr.Prevented[si]++
			case off.Violations == 0 && r.Violations > 0:
				sr.Caused[si]++
			}
			sr.Interventions[si] += r.Interventions
			sr.Handled[si] += r.Handled
		}
		sr.Rows = append(sr.Rows, row)
	}
	for _, n := range names {
		sr.Availability = append(sr.Availability, Availability{Name: n, Mean: avail[n]})
	}
	return sr, nil
}

// changedPct is the share of actions steering changed in mode si's runs.
func (s ServiceReport) changedPct(si int) float64 {
	if s.Handled[si] == 0 {
		return 0
	}
	return 100 * float64(s.Interventions[si]) / float64(s.Handled[si])
}

// Write prints the report: per target, its table and summary lines, and
// with measured the wall, CPU and round times (which differ between two
// runs of a plan; everything else is a function of the plan and the code).
func (r Report) Write(w io.Writer, measured bool) {
	for i, s := range r.Services {
		if i > 0 {
			fmt.Fprintln(w)
		}
		r.Plan.writeService(w, s, measured)
	}
}

// joinInts renders per-mode figures as "a/b/c".
func joinInts[T int | int64](xs []T) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatInt(int64(x), 10)
	}
	return strings.Join(parts, "/")
}

// joinFloats renders per-mode figures with format f, joined by "/".
func joinFloats(f string, xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf(f, x)
	}
	return strings.Join(parts, "/")
}

// modeNames renders modes as "off/immediate/steer+immediate".
func modeNames(ms []Mode) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = string(m)
	}
	return strings.Join(parts, "/")
}

// writeService prints one target's table and summary.
func (p Plan) writeService(w io.Writer, s ServiceReport, measured bool) {
	steered := p.steered()
	fmt.Fprintf(w, "%s: %d nodes, %s, churn %s, breaks %s; %d liveness and bounded properties\n",
		s.Target.Label(), s.Target.Nodes, p.Duration, p.Churn, p.Breaks, s.Properties)
	fmt.Fprintf(w, "  held, violations, outages: %s; cost, changed%%: %s\n", modeNames(p.Modes), modeNames(steered))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  seed\theld\tcost\tviolations\toutages\tchanged%")
	for _, row := range s.Rows {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\n", row.Seed, joinInts(row.Held), joinInts(row.Cost),
			joinInts(row.Violations), joinInts(row.Outages), joinFloats("%.2f", row.ChangedPct))
	}
	tw.Flush()
	seeds := len(p.Seeds)
	var cost, prevented, changed []string
	for si, m := range steered {
		cost = append(cost, fmt.Sprintf("%s %d (%d of %d seeds)", m, s.Cost[si], s.CostSeeds[si], seeds))
		prevented = append(prevented, fmt.Sprintf("%s %d (caused %d)", m, s.Prevented[si], s.Caused[si]))
		changed = append(changed, fmt.Sprintf("%s %.2f%%", m, s.changedPct(si)))
	}
	fmt.Fprintf(w, "  liveness cost: %s\n", strings.Join(cost, ", "))
	fmt.Fprintf(w, "  violating off: %d of %d seeds; prevented: %s\n", s.ViolatingOff, seeds, strings.Join(prevented, ", "))
	fmt.Fprintf(w, "  actions changed: %s\n", strings.Join(changed, ", "))
	for _, a := range s.Availability {
		pct := make([]float64, len(a.Mean))
		for i, x := range a.Mean {
			pct[i] = 100 * x
		}
		fmt.Fprintf(w, "  availability %s: %s%%\n", a.Name, joinFloats("%.1f", pct))
	}
	if measured {
		wall, cpu, rounds := make([]float64, len(p.Modes)), make([]float64, len(p.Modes)), make([]float64, len(p.Modes))
		for mi := range p.Modes {
			wall[mi], cpu[mi] = s.Wall[mi]/float64(seeds), s.CPU[mi]/float64(seeds)
			if s.VirtualMinutes[mi] > 0 {
				rounds[mi] = s.Rounds[mi] / s.VirtualMinutes[mi]
			}
		}
		fmt.Fprintf(w, "  per run (%s): %s s wall, %s s CPU; steering rounds %s s per virtual minute\n", modeNames(p.Modes),
			joinFloats("%.2f", wall), joinFloats("%.2f", cpu), joinFloats("%.3f", rounds))
	}
}

// Totals is the report's last line: the plan's totals over every target
// and seed, per steered mode where it says so.
type Totals struct {
	Format       string           `json:"format"`
	Runs         int              `json:"runs"`
	Services     int              `json:"services"`
	Seeds        int              `json:"seeds"`
	ViolatingOff int              `json:"violating_off"`
	LivenessCost map[Mode]int     `json:"liveness_cost"`
	CostSeeds    map[Mode]int     `json:"liveness_cost_seeds"`
	Prevented    map[Mode]int     `json:"prevented"`
	Caused       map[Mode]int     `json:"caused"`
	ChangedPct   map[Mode]float64 `json:"changed_pct"`
	// Measured: the wall and process CPU seconds of every run, and per
	// steered mode the seconds the steering rounds took.
	WallSeconds  float64          `json:"wall_seconds"`
	CPUSeconds   float64          `json:"cpu_seconds"`
	RoundSeconds map[Mode]float64 `json:"round_seconds"`
}

// round rounds x to digits decimals, for the totals line.
func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// Totals sums the report.
func (r Report) Totals() Totals {
	steered := r.Plan.steered()
	t := Totals{Format: Format, Runs: r.Plan.Runs(), Services: len(r.Services), Seeds: len(r.Plan.Seeds),
		LivenessCost: map[Mode]int{}, CostSeeds: map[Mode]int{}, Prevented: map[Mode]int{}, Caused: map[Mode]int{},
		ChangedPct: map[Mode]float64{}, RoundSeconds: map[Mode]float64{}}
	interventions, handled := map[Mode]uint64{}, map[Mode]uint64{}
	for _, s := range r.Services {
		t.ViolatingOff += s.ViolatingOff
		for si, m := range steered {
			t.LivenessCost[m] += s.Cost[si]
			t.CostSeeds[m] += s.CostSeeds[si]
			t.Prevented[m] += s.Prevented[si]
			t.Caused[m] += s.Caused[si]
			interventions[m] += s.Interventions[si]
			handled[m] += s.Handled[si]
		}
		for mi, m := range r.Plan.Modes {
			t.WallSeconds += s.Wall[mi]
			t.CPUSeconds += s.CPU[mi]
			if m != Off {
				t.RoundSeconds[m] += s.Rounds[mi]
			}
		}
	}
	for _, m := range steered {
		if handled[m] > 0 {
			t.ChangedPct[m] = round(100*float64(interventions[m])/float64(handled[m]), 2)
		}
		t.RoundSeconds[m] = round(t.RoundSeconds[m], 3)
	}
	t.WallSeconds, t.CPUSeconds = round(t.WallSeconds, 3), round(t.CPUSeconds, 3)
	return t
}
