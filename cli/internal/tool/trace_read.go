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
	if err := checkCheckOutputBounds(file, co); err != nil {
		return co, rep, err
	}
	raw, err := replayableReports(co)
	if err != nil {
		return co, rep, err
	}
	if outsideClosedRange(which, 1, len(raw)) {
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

// checkCheckOutputBounds checks the node count, the fault budgets and the
// names of a check --json output against what the model rebuild accepts.
func checkCheckOutputBounds(file string, co checkOutput) error {
	return FirstBrokenRule(
		UsageRule{outsideClosedRange(co.Nodes, 1, maxCheckNodes), usagef("%s: nodes %d, want 1..%d", file, co.Nodes, maxCheckNodes)},
		UsageRule{AnyConditionHolds(outsideClosedRange(co.Resets, 0, report.MaxFaults), outsideClosedRange(co.Breaks, 0, report.MaxFaults), outsideClosedRange(co.Drops, 0, report.MaxFaults)),
			usagef("%s: resets %d, breaks %d and drops %d, want 0..%d", file, co.Resets, co.Breaks, co.Drops, report.MaxFaults)},
		UsageRule{outsideClosedRange(co.Refusals, 0, report.MaxFaults), usagef("%s: refusals %d, want 0..%d", file, co.Refusals, report.MaxFaults)},
		UsageRule{max(len(co.Target), len(co.Fix)) > report.MaxNameBytes,
			usagef("%s: service %s or fix %s longer than %d bytes", file, report.Quote(co.Target), report.Quote(co.Fix), report.MaxNameBytes)},
	)
}

// replayableReports are the violations of a check --json output that
// 'trace' replays: its reports, or a walk check's liveness suspect.
func replayableReports(co checkOutput) ([]json.RawMessage, error) {
	if l := co.Liveness; len(co.Reports) == 0 && l != nil && l.Report != nil {
		b, err := json.Marshal(l.Report)
		if err != nil {
			return nil, err
		}
		return []json.RawMessage{b}, nil
	}
	return co.Reports, nil
}
