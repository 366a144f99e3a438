package steering

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// Shipped filters close the window before a node's first round: a
// violation an offline search finds from the deployment's initial
// configuration (crystalball check --ship FILE) can bite before any
// node has gathered a snapshot, and no round, look-ahead or check on an
// empty view can stop it. The search writes, for each violating path,
// the filter of the path's earliest event a filter can stop, whichever
// node's it is; each node installs its own at start
// (LayerConfig.Shipped), explained as "shipped". They are in force like a
// restored filter: the node's first round replaces them with what it
// predicts from the node's own snapshot, and a durable record read back
// at a restart replaces them with what the node had learned.

// ShippedFormat versions a file of shipped filters.
const ShippedFormat = "crystalball-shipped-filters/1"

// MaxShippedBytes and MaxShippedFilters bound a file of shipped filters a
// node reads: past them the file is refused whole.
const (
	MaxShippedBytes   = 1 << 20
	MaxShippedFilters = 1024
)

// ErrShipped is wrapped by every error reading a file of shipped filters.
var ErrShipped = errors.New("steering: shipped filters")

// ShippedFilter is a filter an offline search predicted from the initial
// configuration, and why.
type ShippedFilter struct {
	Filter Filter      `json:"filter"`
	Why    Explanation `json:"why"`
}

// shippedFile is the file's JSON form.
type shippedFile struct {
	Format  string          `json:"format"`
	Filters []ShippedFilter `json:"filters"`
}

// ShipPath returns the filter an offline search ships against a
// violation of property prop (its error err, nil allowed) along path from
// the initial state: the filter of the path's earliest event a filter can
// stop, at whichever node it happens; ok is false when no event of the
// path can be stopped (only faults and sends to itself).
func ShipPath(prop string, kind node.PropertyKind, err error, path []consequence.ActorAction) (ShippedFilter, bool) {
	for _, a := range path {
		f, ok := filterFor(a.Node, a, nil)
		if !ok {
			continue
		}
		x := Explanation{Source: "shipped", Property: prop, Kind: kind.String()}
		if err != nil {
			x.Error = err.Error()
		}
		for _, b := range path {
			x.Path = append(x.Path, b.String())
		}
		return ShippedFilter{Filter: f, Why: x}, true
	}
	return ShippedFilter{}, false
}

// EncodeShipped returns the file of the shipped filters fs, duplicates
// (the same filter against several paths) kept once, the first
// explanation winning.
func EncodeShipped(fs []ShippedFilter) ([]byte, error) {
	out := shippedFile{Format: ShippedFormat, Filters: []ShippedFilter{}}
	seen := map[Filter]bool{}
	for _, f := range fs {
		if !seen[f.Filter] {
			seen[f.Filter] = true
			out.Filters = append(out.Filters, f)
		}
	}
	if len(out.Filters) > MaxShippedFilters {
		return nil, fmt.Errorf("%w: %d filters (at most %d)", ErrShipped, len(out.Filters), MaxShippedFilters)
	}
	return json.MarshalIndent(out, "", "  ")
}

// DecodeShipped reads a file of shipped filters. Bad input — past the
// bounds, not this format, a filter of no known kind or of node None — is
// an error wrapping ErrShipped; nothing is half read.
func DecodeShipped(b []byte) ([]ShippedFilter, error) {
	if len(b) > MaxShippedBytes {
		return nil, fmt.Errorf("%w: %d bytes (at most %d)", ErrShipped, len(b), MaxShippedBytes)
	}
	var f shippedFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrShipped, err)
	}
	if f.Format != ShippedFormat {
		return nil, fmt.Errorf("%w: format %q, want %q", ErrShipped, f.Format, ShippedFormat)
	}
	if len(f.Filters) > MaxShippedFilters {
		return nil, fmt.Errorf("%w: %d filters (at most %d)", ErrShipped, len(f.Filters), MaxShippedFilters)
	}
	if err := checkShippedFilters(f.Filters); err != nil {
		return nil, err
	}
	return f.Filters, nil
}

// checkShippedFilters returns the error of the first shipped filter that
// names no node or no known kind.
func checkShippedFilters(fs []ShippedFilter) error {
	for i, s := range fs {
		if s.Filter.Node == node.None || !knownFilterKind(s.Filter.Kind) {
			return fmt.Errorf("%w: filter %d (%v) names no node or no known kind", ErrShipped, i, s.Filter)
		}
	}
	return nil
}

// installShipped installs the shipped filters of this node, explained as
// shipped (core goroutine, before the first event). Whether a message
// filter breaks its connection is the node's rule (filterBreaks), not the
// file's: the search that shipped it does not know the node's
// configuration.
func (l *Layer) installShipped() {
	if l.mode != Steer {
		return
	}
	var fs []Filter
	for _, s := range l.cfg.Shipped {
		if s.Filter.Node != l.self {
			continue
		}
		f := l.shippedAsOwn(s.Filter)
		fs = append(fs, f)
		if l.why == nil {
			l.why = map[Filter]Explanation{}
		}
		l.why[f] = s.Why
	}
	if len(fs) > 0 {
		l.install(fs, time.Time{})
	}
}

// shippedAsOwn is shipped filter f as this node applies it: a message
// filter breaks its connection by the node's rule (filterBreaks).
func (l *Layer) shippedAsOwn(f Filter) Filter {
	if f.Kind == FilterMessage {
		f.Break = l.gate.filterBreaks(f.Type)
	}
	return f
}
