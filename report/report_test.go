package report_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/report"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/services/randtree/paper"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// figure2 is the snapshot of the paper's Figure 2 live state gathered at
// n9, with one message recorded in flight on n1 → n9, and a steering round
// on it that predicts the paper's violation (twice: the two safety
// predictions of ChildrenSiblingsDisjoint). The round takes no liveness
// walks: on this snapshot its one walk spent the whole step budget (40,000
// steps, most of the round's cost) and predicted nothing. The round is a
// pure function of the snapshot, so it runs once per process (the test
// binary, and each child of TestWriterSurvivesKills); callers must not
// modify what it returns.
func figure2(t *testing.T) (node.Spec, *snapshot.Snapshot, *steering.RoundReport) {
	t.Helper()
	figure2Mu.Lock()
	defer figure2Mu.Unlock()
	if figure2Report == nil {
		figure2Spec, figure2Snap, figure2Report = newFigure2(t)
	}
	return figure2Spec, figure2Snap, figure2Report
}

var (
	figure2Mu     sync.Mutex
	figure2Spec   node.Spec
	figure2Snap   *snapshot.Snapshot
	figure2Report *steering.RoundReport
)

// newFigure2 is figure2 computed afresh.
func newFigure2(t *testing.T) (node.Spec, *snapshot.Snapshot, *steering.RoundReport) {
	t.Helper()
	spec := randtree.NewSpec(randtree.DefaultOptions())
	s, err := paper.Figure2Snapshot(spec)
	if err != nil {
		t.Fatal(err)
	}
	s.Channels = []snapshot.Channel{{From: 1, To: 9, Complete: true,
		Messages: []node.Envelope{{From: 1, To: 9, CN: 7, Msg: randtree.Probe{Root: 1}}}}}
	ctl, err := steering.New(steering.Config{Mode: steering.Debug, Spec: spec, Workload: paper.Figure2Workload,
		Faults:        consequence.Faults{Resets: 1, SilentResets: true},
		LivenessWalks: steering.LivenessWalks{WalkOptions: steering.WalkOptions{Walks: -1}}}, 9)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ctl.Round(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Predictions) == 0 {
		t.Fatal("no prediction on Figure 2's state")
	}
	return spec, s, rep
}

// TestSnapshotRestoresWhatItRenders: a Snapshot document, through JSON,
// restores to the snapshot it was made from (checkpoints, cut, recorded
// messages), and evaluates the service's properties on it.
func TestSnapshotRestoresWhatItRenders(t *testing.T) {
	spec, s, _ := figure2(t)
	doc, err := report.NewSnapshot(s, spec, s.At)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Format != report.SnapshotFormat || len(doc.Nodes) != len(s.Nodes) || len(doc.Properties) != len(spec.Properties) {
		t.Fatalf("document %+v", doc)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var back report.Snapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	reg, _ := spec.Registry()
	got, err := back.Restore(reg)
	if err != nil {
		t.Fatal(err)
	}
	if got.Gatherer != 9 || got.CN != 7 || !got.At.Equal(s.At) || len(got.Nodes) != len(s.Nodes) {
		t.Fatalf("restored %+v", got)
	}
	for i, n := range got.Nodes {
		if n.Node != s.Nodes[i].Node || string(n.State) != string(s.Nodes[i].State) {
			t.Errorf("node %d: %v, want %v", i, n.Node, s.Nodes[i].Node)
		}
	}
	if len(got.Channels) != 1 || len(got.Channels[0].Messages) != 1 || got.Channels[0].Messages[0].Msg != (randtree.Probe{Root: 1}) {
		t.Errorf("channels %+v", got.Channels)
	}
}

// TestPredictionReplaysFromItsFile: a Writer writes one file per
// prediction of a round; each, read back, rebuilds the model its path
// replays on, to the fingerprint it records.
func TestPredictionReplaysFromItsFile(t *testing.T) {
	spec, s, rep := figure2(t)
	dir := t.TempDir()
	w := &report.Writer{Dir: dir, Source: report.Source{Node: 9, Service: "randtree", Spec: spec, Mode: steering.Debug,
		Workload: paper.Figure2Workload, Faults: consequence.Faults{Resets: 1, SilentResets: true}}}
	w.Round(s, rep)
	files, _ := filepath.Glob(filepath.Join(dir, "prediction-n9-cut7-*.json"))
	if len(files) != len(rep.Predictions) {
		t.Fatalf("%d files for %d predictions", len(files), len(rep.Predictions))
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := report.ReadPrediction(fh, report.Limits{})
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		if doc.Format != report.PredictionFormat || doc.Service != "randtree" || !doc.Workload || doc.Report.Fingerprint == "" {
			t.Fatalf("%s: %+v", f, doc)
		}
		m, err := doc.Model(spec, paper.Figure2Workload)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := m.ReplayReport(doc.Report, m.Properties()); err != nil {
			t.Errorf("%s does not replay: %v", filepath.Base(f), err)
		}
	}
}

// TestPredictionModelRejectsOtherFormats: a document of another format, or
// with a snapshot of another format, is ErrFormat, never a model.
func TestPredictionModelRejectsOtherFormats(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	for _, doc := range []report.Prediction{
		{},
		{Format: "crystalball-prediction/9"},
		{Format: report.PredictionFormat, Snapshot: report.Snapshot{Format: "crystalball-snapshot/9"}},
	} {
		if _, err := doc.Model(spec, nil); !errors.Is(err, report.ErrFormat) {
			t.Errorf("format %q / %q: %v, want ErrFormat", doc.Format, doc.Snapshot.Format, err)
		}
	}
}

// FuzzPredictionModel reads arbitrary bytes as a prediction report, as
// 'trace show' does: every input is a clean error or a model, never a
// panic, and decoding a recorded message never trusts its length headers.
func FuzzPredictionModel(f *testing.F) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	f.Add([]byte(`{"format":"crystalball-prediction/1","snapshot":{"format":"crystalball-snapshot/1","gatherer":1,"cn":1,` +
		`"nodes":[{"id":1,"cn":1,"checkpoint":"AA=="}],"channels":[{"from":1,"to":2,"messages":[{"type":"randtree.Probe","msgpack":"3f////8="}]}]}}`))
	f.Add([]byte(`{"format":"crystalball-prediction/1"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var doc report.Prediction
		if json.Unmarshal(b, &doc) != nil {
			return
		}
		m, err := doc.Model(spec, nil)
		if err == nil && m == nil {
			t.Fatal("no model and no error")
		}
		if err == nil {
			_, _, _ = m.ReplayReport(doc.Report, m.Properties())
		}
	})
}
