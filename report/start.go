package report

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// ErrWrongService is wrapped by Start.Model's error for a document of
// another service than the one asked for: a report naming another
// service, or a snapshot whose properties or checkpoints are not the
// service's.
var ErrWrongService = errors.New("report: document of another service")

// Start is a state a search can start from, as a document holds it: the
// snapshot of a prediction report (what `--reports` writes) or a snapshot
// document (a live node's GET /snapshot). ReadStart reads one; Model
// builds the explorer's model of it.
type Start struct {
	// Format is the document's format: PredictionFormat or SnapshotFormat.
	Format string
	// Service, Fix and Nodes are what a prediction report records of its
	// service (the name it is served by, its corrections and node count);
	// empty for a snapshot document, which names no service.
	Service, Fix string
	Nodes        int
	// Arrivals is a prediction report's bound of arrivals (0 for a
	// snapshot document).
	Arrivals int
	// Snapshot is the state.
	Snapshot Snapshot
}

// ReadStart reads a prediction report or a snapshot document from r
// within lim, telling them apart by their format field, and checks it as
// ReadPrediction or ReadSnapshot would. Its errors wrap ErrTooLarge,
// ErrMalformed or, for a document of any other format, ErrFormat.
func ReadStart(r io.Reader, lim Limits) (Start, error) {
	b, err := ReadDocument(r, lim)
	if err != nil {
		return Start{}, err
	}
	var head struct {
		Format string `json:"format"`
	}
	if err := Unmarshal(b, &head); err != nil {
		return Start{}, err
	}
	switch head.Format {
	case PredictionFormat:
		var pd Prediction
		if err := Unmarshal(b, &pd); err != nil {
			return Start{}, err
		}
		if err := pd.Validate(); err != nil {
			return Start{}, err
		}
		return Start{Format: pd.Format, Service: pd.Service, Fix: pd.Fix, Nodes: pd.Nodes, Arrivals: pd.Arrivals, Snapshot: pd.Snapshot}, nil
	case SnapshotFormat:
		var doc Snapshot
		if err := Unmarshal(b, &doc); err != nil {
			return Start{}, err
		}
		if err := doc.Validate(); err != nil {
			return Start{}, err
		}
		return Start{Format: doc.Format, Snapshot: doc}, nil
	}
	return Start{}, fmt.Errorf("%w: format %s is neither a prediction report (%q) nor a snapshot document (%q)", ErrFormat, Quote(head.Format), PredictionFormat, SnapshotFormat)
}

// Model returns the explorer's model of the start for spec, the service
// served as name, with o (its workload, faults and arrivals; see
// steering.SnapshotModelWith): the snapshot's members at its time and its
// recorded in-flight messages. A report of another service, or a snapshot
// whose properties are not spec's or whose checkpoints or messages spec
// cannot decode, is an error wrapping ErrWrongService.
func (s Start) Model(name string, spec node.Spec, o steering.SnapshotOptions) (*consequence.ActorModel, error) {
	if s.Service != "" && s.Service != name {
		return nil, fmt.Errorf("%w: a report of service %s, not %q", ErrWrongService, Quote(s.Service), name)
	}
	if len(s.Snapshot.Properties) > 0 {
		var have, want []string
		for _, p := range s.Snapshot.Properties {
			have = append(have, p.Name)
		}
		for _, p := range spec.Properties {
			want = append(want, p.Name)
		}
		if !slices.Equal(have, want) {
			return nil, fmt.Errorf("%w: the snapshot's properties %s are not service %q's %q", ErrWrongService, Quote(fmt.Sprint(have)), name, want)
		}
	}
	if len(s.Snapshot.Nodes) == 0 {
		return nil, fmt.Errorf("%w: the snapshot has no members", ErrMalformed)
	}
	reg, err := spec.Registry()
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	snap, err := s.Snapshot.Restore(reg)
	if err != nil {
		return nil, fmt.Errorf("%w: %q cannot decode its messages: %w", ErrWrongService, name, err)
	}
	m, err := steering.SnapshotModelWith(spec, snap, o)
	if err != nil {
		return nil, fmt.Errorf("%w: %q cannot explore the snapshot: %w", ErrWrongService, name, err)
	}
	return m, nil
}
