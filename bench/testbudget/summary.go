package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// summaryFormat versions the -summary JSON.
const summaryFormat = "crystalball-testbudget/1"

// pkgCost is one package's line of the summary.
type pkgCost struct {
	Package string  `json:"package"`
	Result  string  `json:"result"`
	Wall    float64 `json:"wall_s"`
	// CPU is the test binary's user+system time; -1 when no record was
	// written (go test ran without the exec wrapper).
	CPU float64 `json:"cpu_s"`
	// Ref is CPU in seconds of the reference machine (CPU over the
	// calibration's factor); -1 without a calibration or a record.
	Ref       float64 `json:"ref_s"`
	MaxRSSKiB int64   `json:"max_rss_kib,omitempty"`
}

// measured is the time the budget judges: reference CPU when calibrated,
// else CPU when recorded, else wall.
func (c pkgCost) measured() (seconds float64, what string) {
	switch {
	case c.Ref >= 0:
		return c.Ref, "reference CPU"
	case c.CPU >= 0:
		return c.CPU, "CPU"
	}
	return c.Wall, "wall time"
}

// summary is the whole run.
type summary struct {
	Format  string  `json:"format"`
	Module  string  `json:"module,omitempty"`
	BudgetS float64 `json:"budget_s"`
	// Calibrations are the measurements of the reference workload, and
	// Factor the one packages are judged by (the slowest); 0 without.
	Calibrations []calibration `json:"calibrations,omitempty"`
	Factor       float64       `json:"factor,omitempty"`
	Packages     []pkgCost     `json:"packages"`
	Tests        []testRun     `json:"tests"`
	Failed       []string      `json:"failed,omitempty"`
	BuildsFailed []string      `json:"builds_failed,omitempty"`
	Unfinished   []string      `json:"unfinished,omitempty"`
	OverBudget   []string      `json:"over_budget,omitempty"`
	// OverHalf are the packages over half the budget, which pass here
	// but may not on a slower or busier machine.
	OverHalf []string `json:"over_half,omitempty"`
}

// summarize joins the stream's packages with their records, costliest
// first, and the tests slowest first.
func summarize(s *stream, recs map[string]record, budget time.Duration, cals []calibration) summary {
	sum := summary{Format: summaryFormat, BudgetS: budget.Seconds(), Calibrations: cals, Factor: slowest(cals)}
	for _, name := range s.order {
		p := s.pkgs[name]
		c := pkgCost{Package: name, Result: p.result, Wall: p.elapsed, CPU: -1, Ref: -1}
		if rec, ok := recs[name]; ok {
			c.CPU, c.MaxRSSKiB = rec.cpu().Seconds(), rec.MaxRSSKiB
			if sum.Factor > 0 {
				c.Ref = c.CPU / sum.Factor
			}
		}
		sum.Packages = append(sum.Packages, c)
		switch p.result {
		case "fail":
			sum.Failed = append(sum.Failed, name)
		case "":
			sum.Unfinished = append(sum.Unfinished, name)
		}
		switch secs, _ := c.measured(); {
		case budget <= 0:
		case secs > budget.Seconds():
			sum.OverBudget = append(sum.OverBudget, name)
		case secs > budget.Seconds()/2:
			sum.OverHalf = append(sum.OverHalf, name)
		}
	}
	for ip := range s.builds {
		sum.BuildsFailed = append(sum.BuildsFailed, ip)
	}
	sort.Strings(sum.BuildsFailed)
	sort.SliceStable(sum.Packages, func(i, j int) bool {
		a, _ := sum.Packages[i].measured()
		b, _ := sum.Packages[j].measured()
		return a > b
	})
	sum.Tests = append(sum.Tests, s.tests...)
	sort.SliceStable(sum.Tests, func(i, j int) bool { return sum.Tests[i].Seconds > sum.Tests[j].Seconds })
	return sum
}

// ok is whether the run passes: every test and build passed, every
// package finished, none over budget.
func (sum summary) ok() bool {
	return len(sum.Failed)+len(sum.BuildsFailed)+len(sum.Unfinished)+len(sum.OverBudget) == 0
}

// print writes the tables and the verdict.
func (sum summary) print(w io.Writer, topPackages, topTests int) {
	var cpu, ref, wall float64
	tests := 0
	for _, c := range sum.Packages {
		if c.CPU > 0 {
			cpu += c.CPU
		}
		if c.Ref > 0 {
			ref += c.Ref
		}
		wall += c.Wall
	}
	for _, t := range sum.Tests {
		if t.Result != "skip" {
			tests++
		}
	}
	fmt.Fprintln(w)
	for _, c := range sum.Calibrations {
		fmt.Fprintln(w, c.describe())
	}
	refText := ""
	if sum.Factor > 0 {
		refText = fmt.Sprintf(", %.1fs of the reference machine's (×1/%.2f)", ref, sum.Factor)
	}
	fmt.Fprintf(w, "testbudget: %d packages, %d top-level tests; test binaries used %.1fs of CPU%s (wall %.1fs summed over packages)\n",
		len(sum.Packages), tests, cpu, refText, wall)
	fmt.Fprintf(w, "%-44s %9s %9s %9s %9s\n", "costliest packages", "CPU", "ref CPU", "wall", "max RSS")
	for i, c := range sum.Packages {
		if i == topPackages {
			break
		}
		fmt.Fprintf(w, "%-44s %9s %9s %8.1fs %6d MiB\n", sum.short(c.Package), seconds(c.CPU), seconds(c.Ref), c.Wall, c.MaxRSSKiB>>10)
	}
	fmt.Fprintf(w, "slowest tests (wall time):\n")
	for i, t := range sum.Tests {
		if i == topTests {
			break
		}
		fmt.Fprintf(w, "  %7.1fs  %s %s\n", t.Seconds, sum.short(t.Package), t.Test)
	}
	sum.printVerdict(w)
}

func (sum summary) printVerdict(w io.Writer) {
	budget := time.Duration(sum.BudgetS * float64(time.Second))
	for _, name := range sum.OverBudget {
		for _, c := range sum.Packages {
			if c.Package != name {
				continue
			}
			secs, what := c.measured()
			fmt.Fprintf(w, "testbudget: FAIL: %s used %.1fs of %s%s, over the budget of %v a package; its slowest tests:\n", name, secs, what, c.raw(), budget)
			n := 0
			for _, t := range sum.Tests {
				if t.Package == name && n < 10 {
					fmt.Fprintf(w, "  %7.1fs  %s\n", t.Seconds, t.Test)
					n++
				}
			}
		}
	}
	for _, name := range sum.OverHalf {
		for _, c := range sum.Packages {
			if c.Package == name {
				secs, what := c.measured()
				fmt.Fprintf(w, "testbudget: warning: %s used %.1fs of %s%s, over half the budget of %v: a slower or busier machine may fail it\n", name, secs, what, c.raw(), budget)
			}
		}
	}
	if len(sum.Failed) > 0 {
		fmt.Fprintf(w, "testbudget: FAIL: tests failed in %s\n", strings.Join(sum.Failed, ", "))
	}
	if len(sum.BuildsFailed) > 0 {
		fmt.Fprintf(w, "testbudget: FAIL: builds failed: %s\n", strings.Join(sum.BuildsFailed, ", "))
	}
	if len(sum.Unfinished) > 0 {
		fmt.Fprintf(w, "testbudget: FAIL: no result for %s (go test was stopped?)\n", strings.Join(sum.Unfinished, ", "))
	}
	switch {
	case !sum.ok():
	case budget == 0:
		fmt.Fprintln(w, "testbudget: ok (no budget set)")
	case sum.Factor > 0:
		fmt.Fprintf(w, "testbudget: ok (no package over %v of reference CPU)\n", budget)
	default:
		fmt.Fprintf(w, "testbudget: ok (no package over %v)\n", budget)
	}
}

// raw is the package's CPU in this machine's seconds, when the budget
// judged reference seconds.
func (c pkgCost) raw() string {
	if c.Ref < 0 {
		return ""
	}
	return fmt.Sprintf(" (%.1fs of CPU here)", c.CPU)
}

// seconds formats a figure of the tables; negative is "-" (not measured).
func seconds(s float64) string {
	if s < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fs", s)
}

// short is a package's import path within the module, for the tables.
func (sum summary) short(pkg string) string {
	if sum.Module == "" {
		return pkg
	}
	if pkg == sum.Module {
		return "."
	}
	return strings.TrimPrefix(pkg, sum.Module+"/")
}

// write stores the summary as JSON.
func (sum summary) write(path string) error {
	data, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return fmt.Errorf("testbudget: summary: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("testbudget: summary: %w", err)
	}
	return nil
}
