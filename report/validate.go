package report

import (
	"fmt"
	"io"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// ReadPrediction reads a Prediction document from r within lim (ReadDocument)
// and checks it (Prediction.Validate). Its errors wrap ErrTooLarge,
// ErrMalformed or ErrFormat and quote at most QuoteBytes of the input.
func ReadPrediction(r io.Reader, lim Limits) (Prediction, error) {
	var doc Prediction
	if err := decode(r, lim, &doc); err != nil {
		return Prediction{}, err
	}
	if err := doc.Validate(); err != nil {
		return Prediction{}, err
	}
	return doc, nil
}

// ReadSnapshot reads a Snapshot document (a node's GET /snapshot body)
// from r within lim and checks it (Snapshot.Validate). Its errors wrap
// ErrTooLarge, ErrMalformed or ErrFormat.
func ReadSnapshot(r io.Reader, lim Limits) (Snapshot, error) {
	var doc Snapshot
	if err := decode(r, lim, &doc); err != nil {
		return Snapshot{}, err
	}
	if err := doc.Validate(); err != nil {
		return Snapshot{}, err
	}
	return doc, nil
}

// Validate checks what Model would trust before it allocates: the format,
// the names it looks the service up by (at most MaxNameBytes), the node
// count (1..MaxNodes, or 0 for the service's default), the fault budgets
// (0..MaxFaults), the path's length (at most MaxPathSteps), the dead end's
// steps, and the snapshot (Snapshot.Validate).
func (pd Prediction) Validate() error {
	if pd.Format != PredictionFormat {
		return fmt.Errorf("%w: not a prediction report (format %s, want %q)", ErrFormat, Quote(pd.Format), PredictionFormat)
	}
	if err := checkNames(map[string]string{"service": pd.Service, "fix": pd.Fix, "mode": pd.Mode, "property": pd.Property, "options": pd.Options}); err != nil {
		return err
	}
	if pd.Nodes < 0 || pd.Nodes > MaxNodes {
		return fmt.Errorf("%w: nodes %d, want 0..%d", ErrTooLarge, pd.Nodes, MaxNodes)
	}
	for name, n := range map[string]int{"resets": pd.Resets, "breaks": pd.Breaks, "refusals": pd.Refusals, "arrivals": pd.Arrivals,
		"drops": pd.Drops, "losses": pd.Losses, "duplicates": pd.Duplicates, "reorders": pd.Reorders, "delays": pd.Delays} {
		if n < 0 || n > MaxFaults {
			return fmt.Errorf("%w: %s %d, want 0..%d", ErrTooLarge, name, n, MaxFaults)
		}
	}
	if _, err := pd.Lasting.Apply(consequence.Faults{}); err != nil {
		return err
	}
	if err := ValidateReport(pd.Report); err != nil {
		return err
	}
	if d := pd.Liveness; d != nil {
		if err := checkPath("live path", d.LivePath); err != nil {
			return err
		}
		if d.CriticalStep < 1 || d.CriticalStep > len(pd.Report.Path) {
			return fmt.Errorf("%w: critical step %d is outside the path's %d steps", ErrMalformed, d.CriticalStep, len(pd.Report.Path))
		}
	}
	return pd.Snapshot.validate(true)
}

// Validate checks a snapshot document before Restore trusts it: its
// format, at most MaxNodes members and channels between at most MaxNodes²
// pairs of them, message types of at most MaxNameBytes.
func (doc Snapshot) Validate() error { return doc.validate(false) }

// validate is Validate; inPrediction accepts the empty format of reports
// written before the snapshot had one.
func (doc Snapshot) validate(inPrediction bool) error {
	if doc.Format != SnapshotFormat && !(inPrediction && doc.Format == "") {
		return fmt.Errorf("%w: unknown snapshot format %s (want %q)", ErrFormat, Quote(doc.Format), SnapshotFormat)
	}
	if len(doc.Nodes) > MaxNodes {
		return fmt.Errorf("%w: %d snapshot members, want at most %d", ErrTooLarge, len(doc.Nodes), MaxNodes)
	}
	for _, c := range doc.Channels {
		for _, m := range c.Messages {
			if len(m.Type) > MaxNameBytes {
				return fmt.Errorf("%w: a message type of %d bytes on %v→%v, want at most %d", ErrTooLarge, len(m.Type), c.From, c.To, MaxNameBytes)
			}
		}
	}
	for _, n := range doc.Nodes {
		for _, t := range n.Timers {
			if len(t.Name) > MaxNameBytes {
				return fmt.Errorf("%w: a timer name of %d bytes on %v, want at most %d", ErrTooLarge, len(t.Name), n.ID, MaxNameBytes)
			}
		}
	}
	return nil
}

// checkNames bounds the strings a reader looks things up by.
func checkNames(names map[string]string) error {
	for _, field := range []string{"service", "fix", "mode", "property", "kind", "options"} {
		if s, ok := names[field]; ok && len(s) > MaxNameBytes {
			return fmt.Errorf("%w: %s of %d bytes (%s), want at most %d", ErrTooLarge, field, len(s), Quote(s), MaxNameBytes)
		}
	}
	return nil
}

// ValidateReport checks a reported path before a model replays it: the
// names it is looked up by (at most MaxNameBytes) and its length (at most
// MaxPathSteps). Its errors wrap ErrTooLarge.
func ValidateReport(r consequence.ActorReport) error {
	if err := checkNames(map[string]string{"property": r.Property, "kind": r.Kind}); err != nil {
		return err
	}
	return checkPath("path", r.Path)
}

// checkPath bounds a path's length and the names its steps are looked up
// by (the explorer's errors quote them).
func checkPath(what string, path []consequence.ActionRecord) error {
	if len(path) > MaxPathSteps {
		return fmt.Errorf("%w: a %s of %d steps, want at most %d", ErrTooLarge, what, len(path), MaxPathSteps)
	}
	for i, r := range path {
		if len(r.Kind) > MaxNameBytes || len(r.Type) > MaxNameBytes || len(r.Timer) > MaxNameBytes {
			return fmt.Errorf("%w: step %d of the %s names a kind, type or timer longer than %d bytes", ErrTooLarge, i+1, what, MaxNameBytes)
		}
	}
	return nil
}
