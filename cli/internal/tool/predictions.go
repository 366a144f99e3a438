package tool

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/report"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// Deep online debugging (emulate --mode debug): the distinct violations
// the predicting nodes found, each matched against what really happened
// later in the run.

// predictorIDs picks n of the nodes 1..nodes to run steering rounds,
// spread evenly over the IDs from n1 (n = 2 of 100: n1 and n51); n ≤ 0 or
// n ≥ nodes means every node (nil). n1 is the bootstrap every node of the
// CLI's workloads joins and rejoins through, so a predictor there has the
// joins in its neighbourhood: a node that resets in another predictor's
// model rejoins through n1, which is usually outside that model (the dummy
// sink), and goes no further.
func predictorIDs(n, nodes int) []node.ID {
	return emulation.SpreadPredictors(n, nodes)
}

// episode is the start of a stretch of states violating a property in an
// emulated run (emulation.Violation with New set).
type episode struct {
	at    time.Duration
	node  node.ID
	event string
	err   string
}

// maxEpisodes bounds the episodes recorded per property, so a run that
// violates a property all the time cannot grow memory without bound.
const maxEpisodes = 100_000

// episodeLog records the episodes of every safety property of a run.
type episodeLog map[string][]episode

func (l episodeLog) add(v emulation.Violation) {
	if !v.New || len(l[v.Property]) >= maxEpisodes {
		return
	}
	e := episode{at: v.At.Sub(emulation.Epoch), node: v.Node, event: v.Event}
	if v.Err != nil {
		e.err = v.Err.Error()
	}
	l[v.Property] = append(l[v.Property], e)
}

// predictionOut is one distinct prediction of an emulated run in the
// --json output.
type predictionOut struct {
	Property string `json:"property"`
	// Kind is "safety" or "liveness".
	Kind string `json:"kind"`
	// Shape is the path with nodes as roles (steering.Shape): the key the
	// predictions are deduplicated by, with Property.
	Shape string `json:"shape"`
	// FirstPredictedS is when a round first predicted it (seconds into
	// the run), Node the node that did, Predictors every node that did
	// and Rounds how many rounds did.
	FirstPredictedS float64   `json:"first_predicted_s"`
	Node            node.ID   `json:"node"`
	Predictors      []node.ID `json:"predictors"`
	Rounds          int       `json:"rounds"`
	// Depth, Error, Path and Filter are those of the first prediction.
	Depth  int      `json:"depth"`
	Error  string   `json:"error"`
	Path   []string `json:"path"`
	Filter string   `json:"filter,omitempty"`
	// Rank and Likelihood are those of the first prediction among its
	// round's (steering.Prediction.Rank; 0 and nil for a dead end).
	Rank       int                  `json:"rank,omitempty"`
	Likelihood *steering.Likelihood `json:"likelihood,omitempty"`
	// Happened is the first episode of the property in the run at or
	// after FirstPredictedS — preferring one whose explanation names a
	// node of the predicted path — or nil if the property was never
	// violated after it was predicted. ViolatedBefore is set if the
	// property had already been violated earlier in the run.
	Happened       *happenedOut `json:"happened,omitempty"`
	ViolatedBefore bool         `json:"violated_before"`
	// Liveness is set on a liveness prediction: the path's last step is
	// the critical transition into a dead end.
	Liveness *deadEndOut `json:"liveness,omitempty"`
	// Report is the prediction report written for it (--reports).
	Report string `json:"report,omitempty"`
	// Confirmed is a directed run's verdict on its path (--confirm;
	// emulate_confirm.go).
	Confirmed *emulation.PathJudgement `json:"confirmed,omitempty"`
}

// deadEndOut is what a liveness prediction adds (steering.Critical).
type deadEndOut struct {
	Verdict string `json:"verdict"`
	// CriticalStep is the 1-based step of Path that is the critical
	// transition, Critical its text, and LiveStep what the nearest live
	// path did at that step instead.
	CriticalStep int    `json:"critical_step"`
	Critical     string `json:"critical"`
	LiveStep     string `json:"live_step,omitempty"`
	// LivePath is the nearest live path.
	LivePath []string `json:"live_path"`
	// HoldsAtEnd says whether the property held on the run's final state,
	// after the heal phase (a dead end that happened leaves it failing).
	HoldsAtEnd bool `json:"holds_at_end"`
}

// happenedOut is a violation in the run that a prediction foretold.
type happenedOut struct {
	AtS    float64 `json:"at_s"`
	AfterS float64 `json:"after_prediction_s"`
	Node   node.ID `json:"node"`
	Event  string  `json:"event"`
	Error  string  `json:"error"`
	// SameNodes is set when the violation's explanation names a node of
	// the predicted path.
	SameNodes bool `json:"same_nodes"`
}

// matchPredictions renders the distinct predictions of log and matches each
// against the episodes of its property.
func matchPredictions(log *steering.PredictionLog, eps episodeLog, final []emulation.LivenessResult) []predictionOut {
	out := make([]predictionOut, 0, log.Len())
	for _, e := range log.Entries() {
		out = append(out, renderPrediction(e, eps, final))
	}
	return out
}

// renderPrediction renders one distinct prediction: a liveness one with
// its dead end, a safety one with the episode of its property that
// happened after it (if any).
func renderPrediction(e steering.LoggedPrediction, eps episodeLog, final []emulation.LivenessResult) predictionOut {
	first := e.First.Sub(emulation.Epoch)
	p := predictionOut{Property: e.Property, Kind: node.Safety.String(), Shape: e.Shape, FirstPredictedS: first.Seconds(), Node: e.Node,
		Predictors: slices.Clone(e.Nodes), Rounds: e.Rounds, Depth: len(e.Example.Path), Error: e.Example.Report.Error}
	var onPath []node.ID
	p.Path, onPath = renderPredictedPath(e.Example.Path)
	if e.Example.Filter != nil {
		p.Filter = e.Example.Filter.String()
	}
	if e.Example.Rank > 0 {
		l := e.Example.Likelihood
		p.Rank, p.Likelihood = e.Example.Rank, &l
	}
	if c := e.Example.Critical; c != nil {
		p.Kind = node.Liveness.String()
		p.Liveness = deadEnd(e.Example, final)
		return p
	}
	found, same, before := firstEpisodeAfter(eps[e.Property], first, onPath)
	p.ViolatedBefore = before
	p.Happened = happenedAfter(found, first, same)
	return p
}

// renderPredictedPath renders a predicted path's actions, and the nodes they
// involve (each action's node and peer) in order.
func renderPredictedPath(path []consequence.ActorAction) ([]string, []node.ID) {
	texts := make([]string, len(path))
	var onPath []node.ID
	for i, a := range path {
		texts[i] = a.String()
		onPath = append(onPath, a.Node)
		if a.Peer != node.None {
			onPath = append(onPath, a.Peer)
		}
	}
	return texts, onPath
}

// firstEpisodeAfter picks the episode a prediction made at first foretold
// among eps: the first at or after it whose explanation names a node of
// onPath, else the first at or after it; before says whether one came
// before it.
func firstEpisodeAfter(eps []episode, first time.Duration, onPath []node.ID) (found *episode, same, before bool) {
	for i := range eps {
		ep := &eps[i]
		if ep.at < first {
			before = true
			continue
		}
		named := slices.ContainsFunc(steering.NamedNodes(ep.err), func(id node.ID) bool { return slices.Contains(onPath, id) })
		if found == nil || (named && !same) {
			found, same = ep, named
		}
		if same {
			break
		}
	}
	return found, same, before
}

// happenedAfter renders the episode found (nil: none) that happened after
// the prediction made at first; same says it names a node of the path.
func happenedAfter(found *episode, first time.Duration, same bool) *happenedOut {
	if found == nil {
		return nil
	}
	return &happenedOut{AtS: found.at.Seconds(), AfterS: (found.at - first).Seconds(), Node: found.node,
		Event: found.event, Error: found.err, SameNodes: same}
}

// deadEnd renders a liveness prediction's critical transition, and
// whether its property held at the end of the run (final).
func deadEnd(p steering.Prediction, final []emulation.LivenessResult) *deadEndOut {
	c := p.Critical
	d := &deadEndOut{Verdict: c.Verdict.String(), CriticalStep: c.Step + 1, HoldsAtEnd: livenessHoldsAtEnd(final, p.Property),
		Critical: pathActionText(p.Path, c.Step), LiveStep: pathActionText(c.LivePath, c.Step)}
	for _, a := range c.LivePath {
		d.LivePath = append(d.LivePath, a.String())
	}
	return d
}

// pathActionText is the text of path's action i, or "" when i is not in it.
func pathActionText(path []consequence.ActorAction, i int) string {
	if i < 0 || i >= len(path) {
		return ""
	}
	return path[i].String()
}

// livenessHoldsAtEnd reports whether the liveness property held on the run's
// final state (the last result of that name; true when there is none).
func livenessHoldsAtEnd(final []emulation.LivenessResult, property string) bool {
	holds := true
	for _, l := range final {
		if l.Name == property {
			holds = l.Holds
		}
	}
	return holds
}

// writePredictionReports writes a prediction report (trace show opens it)
// for the first prediction of every distinct violation of log into dir,
// and records the file names in preds (same order).
func writePredictionReports(dir string, log *steering.PredictionLog, src report.Source, preds []predictionOut) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--reports: %w", err)
	}
	for i, e := range log.Entries() {
		if !hasPredictionReport(e) {
			continue
		}
		name, err := writePredictionReport(dir, i, e, src)
		if err != nil {
			return err
		}
		preds[i].Report = name
	}
	return nil
}

// hasPredictionReport reports whether a logged prediction can be written
// as a report: its example names a property and it kept its snapshot.
func hasPredictionReport(e steering.LoggedPrediction) bool {
	return e.Example.Report.Property != "" && e.Snapshot != nil
}

// writePredictionReport writes the report of the i-th (0-based) logged
// prediction e into dir, predicted by its node of the run src describes,
// and returns its file name.
func writePredictionReport(dir string, i int, e steering.LoggedPrediction, src report.Source) (string, error) {
	src.Node = e.Node
	pd, err := report.NewPrediction(src, e.Snapshot, e.Example)
	if err != nil {
		return "", fmt.Errorf("--reports: prediction %d (%s by %v): %w", i+1, e.Property, e.Node, err)
	}
	name := filepath.Join(dir, fmt.Sprintf("prediction-%03d-%s-%v.json", i+1, e.Property, e.Node))
	if err := pd.WriteFile(name); err != nil {
		return "", fmt.Errorf("--reports: %w", err)
	}
	return name, nil
}

// printPredictions prints the distinct predictions of a run.
func printPredictions(w io.Writer, preds []predictionOut, predictors []node.ID, rounds uint64) {
	who := "every node"
	if len(predictors) > 0 {
		who = fmt.Sprint(predictors)
	}
	happened, dead, failing := countPredictions(preds)
	fmt.Fprintf(w, "  predicted: %d distinct safety violations (property, path shape) by %s in %d rounds; %d of them violated later in the run\n",
		len(preds)-dead, who, rounds, happened)
	fmt.Fprintf(w, "  predicted: %d distinct liveness dead ends; the property of %d of them fails at the end of the run\n", dead, failing)
	for i, p := range preds {
		printPrediction(w, i, p)
	}
}

// countPredictions counts the safety predictions that happened later in
// the run, the liveness dead ends, and those whose property fails at the
// end of the run.
func countPredictions(preds []predictionOut) (happened, dead, failing int) {
	for _, p := range preds {
		switch {
		case p.Liveness != nil:
			dead++
			if !p.Liveness.HoldsAtEnd {
				failing++
			}
		case p.Happened != nil:
			happened++
		}
	}
	return happened, dead, failing
}

// printPrediction prints the i-th (0-based) distinct prediction p: what,
// when and by whom, its shape, its directed run and rank, then its dead
// end or what happened in the run, and its report.
func printPrediction(w io.Writer, i int, p predictionOut) {
	fmt.Fprintf(w, "    %d. %s (%s) at %s by %v (%d rounds, %d predictors), depth %d: %s\n",
		i+1, p.Property, p.Kind, clock(time.Duration(p.FirstPredictedS*float64(time.Second))), p.Node, p.Rounds, len(p.Predictors), p.Depth, p.Error)
	fmt.Fprintf(w, "       shape: %s\n", p.Shape)
	printPredictionJudgements(w, p)
	if d := p.Liveness; d != nil {
		printDeadEnd(w, d)
	} else {
		printHappened(w, p)
	}
	if p.Report != "" {
		fmt.Fprintf(w, "       report: %s\n", p.Report)
	}
}

// printPredictionJudgements prints the directed run's verdict on p's path
// (--confirm) and p's rank in its round, when they are known.
func printPredictionJudgements(w io.Writer, p predictionOut) {
	if c := p.Confirmed; c != nil {
		fmt.Fprintf(w, "       directed run: %s after %d of %d steps%s\n", c.Verdict, c.Steps, p.Depth, detailSuffix(c.Detail))
	}
	if l := p.Likelihood; l != nil {
		fmt.Fprintf(w, "       rank %d in its round: %d faults, %d timers and calls, %d messages in flight, %d sent on the way (cost %g)\n",
			p.Rank, l.Faults, l.Local, l.InFlight, l.Spawned, l.Cost)
	}
}

// printHappened prints whether a safety prediction's property was
// violated in the run after it, and when and where.
func printHappened(w io.Writer, p predictionOut) {
	switch h := p.Happened; {
	case h == nil && p.ViolatedBefore:
		fmt.Fprintln(w, "       not violated after the prediction (violated before it)")
	case h == nil:
		fmt.Fprintln(w, "       not violated in the run")
	default:
		nodes := "other nodes"
		if h.SameNodes {
			nodes = "nodes of the path"
		}
		fmt.Fprintf(w, "       violated at %s (+%.1fs, %s): %s\n", clock(time.Duration(h.AtS*float64(time.Second))), h.AfterS, nodes, h.Error)
	}
}

// printDeadEnd prints a liveness prediction's critical transition.
func printDeadEnd(w io.Writer, d *deadEndOut) {
	fmt.Fprintf(w, "       dead end %s, critical step %d: %s\n", d.Verdict, d.CriticalStep, d.Critical)
	if d.LiveStep != "" {
		fmt.Fprintf(w, "       nearest live path takes instead: %s (live after %d steps)\n", d.LiveStep, len(d.LivePath))
	}
	if d.HoldsAtEnd {
		fmt.Fprintln(w, "       the property holds at the end of the run")
	} else {
		fmt.Fprintln(w, "       the property fails at the end of the run")
	}
}

// detailSuffix is ": detail", or nothing for an empty detail.
func detailSuffix(detail string) string {
	if detail == "" {
		return ""
	}
	return ": " + detail
}
