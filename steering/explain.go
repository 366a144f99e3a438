package steering

import (
	"slices"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// Explanation is why steering kept an event from a node's handler: the
// prediction behind the filter that stopped it (or behind the filter of an
// escalated kind), or the immediate check's veto. An operator reads it in
// /status, the emulator's interventions and the logs, so that "the node
// did not do X" always comes with "because it predicted Y".
type Explanation struct {
	// Source is "round" (the node's own prediction), "replay" (a path an
	// earlier round found that still fails), "request" (another node's
	// steering request, Requester), "check" (the immediate safety check),
	// "look-ahead" (the check's look-ahead before a risky event),
	// "shipped" (an offline search's filter from the initial
	// configuration, LayerConfig.Shipped) or "restored" (a filter read back from the node's durable state,
	// whose prediction the first round has not re-made yet).
	Source string `json:"source"`
	// Property is the property the event would violate, Kind its kind
	// (safety or liveness) and Error the predicted violation.
	Property string `json:"property"`
	Kind     string `json:"kind"`
	Error    string `json:"error,omitempty"`
	// Path is the predicted path, Rank its rank in its round (0: not
	// ranked), Cut the snapshot's checkpoint number.
	Path []string `json:"path,omitempty"`
	Rank int      `json:"rank,omitempty"`
	Cut  uint64   `json:"cut,omitempty"`
	// Requester is the node whose request installed the filter.
	Requester node.ID `json:"requester,omitempty"`
	// Reset marks a prediction whose path resets the node the filter is
	// installed at: the filter is about that reset's aftermath, so it is
	// durable and outlives the reset (durable.go). A filter about the
	// current incarnation's own future dies with it.
	Reset bool `json:"reset,omitempty"`
}

// explainPrediction is the explanation of a filter a round installed for
// prediction p of a round on cut cn.
func explainPrediction(p Prediction, cn uint64) Explanation {
	x := Explanation{Source: "round", Property: p.Property, Kind: p.Report.Kind, Error: p.Report.Error, Rank: p.Rank, Cut: cn, Requester: p.Requested}
	if p.Filter != nil {
		x.Reset = resetsNode(p.Path, p.Filter.Node)
	}
	switch {
	case p.Requested != node.None:
		x.Source = "request"
	case p.Replayed:
		x.Source = "replay"
	}
	for _, r := range p.Report.Path {
		x.Path = append(x.Path, r.Text)
	}
	return x
}

// explainRound records, for the filters fs a round installs, the
// prediction each came from (core goroutine). A filter of an earlier
// round kept in force (an escalated kind) keeps its explanation; filters
// no longer in force lose theirs.
func (l *Layer) explainRound(rep *RoundReport, fs []Filter) {
	why := make(map[Filter]Explanation, len(fs))
	for _, f := range fs {
		if x, ok := l.why[f]; ok {
			why[f] = x
		}
	}
	if rep != nil {
		explainRoundPredictions(why, rep, fs)
	}
	for _, f := range fs {
		if _, ok := why[f]; !ok {
			// Only filters about a reset are restored (durable.go).
			why[f] = Explanation{Source: "restored", Reset: true}
		}
	}
	l.why = why
}

// explainRoundPredictions sets in why, for each filter of fs a prediction
// of rep suggests, the explanation of the likeliest such prediction (the
// likelier ones come last, so theirs is the one kept).
func explainRoundPredictions(why map[Filter]Explanation, rep *RoundReport, fs []Filter) {
	order := slices.Clone(rep.Predictions)
	slices.SortStableFunc(order, func(a, b Prediction) int { return b.Rank - a.Rank })
	for _, p := range order {
		if p.Filter != nil && slices.Contains(fs, *p.Filter) {
			why[*p.Filter] = explainPrediction(p, rep.CN)
		}
	}
}

// resetsNode reports whether path resets node id.
func resetsNode(path []consequence.ActorAction, id node.ID) bool {
	for _, a := range path {
		if a.Kind == consequence.ActReset && a.Node == id {
			return true
		}
	}
	return false
}

// explainVerdict is the explanation of an intervention: the veto's, or
// that of the filter in force that stops ev.
func (l *Layer) explainVerdict(ev node.Event, veto *Veto) *Explanation {
	if veto != nil {
		return explainVeto(veto)
	}
	if _, i := filterSet(l.gate.Filters()).verdict(l.self, ev, 0); i >= 0 {
		if x, ok := l.why[l.gate.Filters()[i]]; ok {
			return &x
		}
	}
	return nil
}

// explainVeto is the explanation of the immediate check's veto, or of its
// look-ahead's.
func explainVeto(veto *Veto) *Explanation {
	x := Explanation{Source: "check", Property: veto.Property, Kind: node.Safety.String()}
	if veto.Ahead > 0 {
		x.Source = "look-ahead"
	}
	if veto.Err != nil {
		x.Error = veto.Err.Error()
	}
	return &x
}

// FilterReason is a filter in force and why (LayerStatus.Reasons).
type FilterReason struct {
	Filter string      `json:"filter"`
	Why    Explanation `json:"why"`
}

// reasons lists the filters in force with their explanations.
func (l *Layer) reasons() []FilterReason {
	fs := l.gate.Filters()
	out := make([]FilterReason, 0, len(fs))
	for _, f := range fs {
		out = append(out, FilterReason{Filter: f.String(), Why: l.why[f]})
	}
	return out
}
