package tool

import (
	"encoding/json"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/report"
)

// readCheckOutput decodes the output of 'check --json' (b, read within
// traceLimits) and its violation which (1 is the first) — of a walk
// check, its liveness suspect (the only one) — checking what the
// model rebuild trusts: the node count (as 'check --nodes' accepts), the
// fault budgets, the names and the path's length. Bad input is a usage
// error quoting at most a short prefix of it.
func readCheckOutput(file string, b []byte, which int) (checkOutput, consequence.ActorReport, error) {
	var co checkOutput
	var rep consequence.ActorReport
	if err := report.Unmarshal(b, &co); err != nil {
		return co, rep, usagef("%s: not the output of 'crystalball check --json': %v", file, err)
	}
	switch {
	case co.Nodes <= 0 || co.Nodes > maxCheckNodes:
		return co, rep, usagef("%s: nodes %d, want 1..%d", file, co.Nodes, maxCheckNodes)
	case co.Resets < 0 || co.Resets > report.MaxFaults || co.Breaks < 0 || co.Breaks > report.MaxFaults || co.Drops < 0 || co.Drops > report.MaxFaults:
		return co, rep, usagef("%s: resets %d, breaks %d and drops %d, want 0..%d", file, co.Resets, co.Breaks, co.Drops, report.MaxFaults)
	case co.Refusals < 0 || co.Refusals > report.MaxFaults:
		return co, rep, usagef("%s: refusals %d, want 0..%d", file, co.Refusals, report.MaxFaults)
	case len(co.Target) > report.MaxNameBytes || len(co.Fix) > report.MaxNameBytes:
		return co, rep, usagef("%s: service %s or fix %s longer than %d bytes", file, report.Quote(co.Target), report.Quote(co.Fix), report.MaxNameBytes)
	}
	raw := co.Reports
	if l := co.Liveness; len(raw) == 0 && l != nil && l.Report != nil {
		b, err := json.Marshal(l.Report)
		if err != nil {
			return co, rep, err
		}
		raw = []json.RawMessage{b}
	}
	if which < 1 || which > len(raw) {
		return co, rep, usagef("%s has %d replayable violations, --violation %d is out of range", file, len(raw), which)
	}
	if err := report.Unmarshal(raw[which-1], &rep); err != nil {
		return co, rep, usagef("%s: violation %d: %v", file, which, err)
	}
	if err := report.ValidateReport(rep); err != nil {
		return co, rep, usagef("%s: violation %d: %v", file, which, err)
	}
	return co, rep, nil
}
