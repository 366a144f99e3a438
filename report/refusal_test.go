package report_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/report"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// announceNote is announcer's message.
type announceNote struct{ T string }

func (announceNote) MessageType() string { return "test.Announce" }

// announcer: node 1's timer "go" sends a note to node 2 with TrySend; a
// refusal makes node 1 forget it for good (Lost), which the "not-lost"
// property forbids — only a refused send breaks it.
type announcer struct {
	Sent, Lost bool
	Got        int
}

func (a *announcer) Init(env node.Env) {
	if env.Self() == 1 {
		env.SetTimer("go", time.Second)
	}
}

func (a *announcer) HandleTimer(env node.Env, name string) {
	a.Sent = true
	env.TrySend(2, announceNote{T: "A"})
}

func (a *announcer) HandleMessage(node.Env, node.ID, node.Message)     { a.Got++ }
func (a *announcer) HandleSendRefused(node.Env, node.ID, node.Message) { a.Lost = true }
func (a *announcer) HandleApp(node.Env, node.Message)                  {}
func (a *announcer) HandleTransportError(node.Env, node.ID)            {}

func announcerSpec() node.Spec {
	return node.Spec{
		Name:     "announcer",
		New:      func() node.Service { return &announcer{} },
		Messages: []node.Message{announceNote{}},
		Properties: []node.Property{node.Always("not-lost", func(v node.View) error {
			if v.Service(1).(*announcer).Lost {
				return errors.New("n1 lost its note")
			}
			return nil
		})},
	}
}

// announcerSnapshot is the snapshot of the two nodes just after Init,
// gathered by node 1.
func announcerSnapshot(t *testing.T, spec node.Spec) *snapshot.Snapshot {
	t.Helper()
	s := &snapshot.Snapshot{Gatherer: 1, CN: 1, At: consequence.DefaultStart}
	for _, id := range []node.ID{1, 2} {
		c, err := node.NewCore(node.CoreConfig{ID: id, Factory: spec.New})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Step(node.Event{Kind: node.EventInit, At: consequence.DefaultStart}); err != nil {
			t.Fatal(err)
		}
		b, err := c.State().AppendCheckpoint(nil)
		if err != nil {
			t.Fatal(err)
		}
		s.Nodes = append(s.Nodes, snapshot.NodeCheckpoint{Node: id, CN: 1, State: b})
	}
	return s
}

// TestPredictionRecordsRefusals: a round with a refusal budget predicts the
// violation only a refused send causes; its report records Refusals, and
// the model it rebuilds replays the path (the refusal rendered in the
// report's text). Without the field — a reader of an older file, or a
// writer that forgot it — the path does not replay.
func TestPredictionRecordsRefusals(t *testing.T) {
	spec := announcerSpec()
	s := announcerSnapshot(t, spec)
	faults := consequence.Faults{Refusals: 1}
	ctl, err := steering.New(steering.Config{Mode: steering.Debug, Spec: spec, Faults: faults, LivenessWalks: steering.LivenessWalks{WalkOptions: steering.WalkOptions{Walks: -1}}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ctl.Round(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Predictions) == 0 {
		t.Fatal("no prediction with a refusal budget")
	}
	p := rep.Predictions[0]
	if p.Rank != 1 || p.Likelihood.Faults != 1 {
		t.Errorf("rank %d, likelihood %+v: want the refusal counted as a fault", p.Rank, p.Likelihood)
	}
	doc, err := report.NewPrediction(report.Source{Node: 1, Service: "announcer", Spec: spec, Mode: steering.Debug, Faults: faults}, s, p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"refusals":1`) || !strings.Contains(string(b), `"kind":"refuse-send"`) {
		t.Fatalf("report without its refusal: %s", b)
	}
	var back report.Prediction
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	m, err := back.Model(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	path, _, err := m.ReplayReport(back.Report, m.Properties())
	if err != nil {
		t.Fatalf("does not replay: %v", err)
	}
	if last := path[len(path)-1].Act; last.Kind != consequence.ActRefuse || last.String() != "n1 refuse-send test.Announce to n2" {
		t.Errorf("the path ends with %v, want the refusal", last)
	}
	back.Refusals = 0
	m, err = back.Model(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.ReplayReport(back.Report, nil); err == nil {
		t.Error("the path replayed on a model without refusals")
	}
	// The same round without the budget predicts nothing.
	ctl, err = steering.New(steering.Config{Mode: steering.Debug, Spec: spec, LivenessWalks: steering.LivenessWalks{WalkOptions: steering.WalkOptions{Walks: -1}}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := ctl.Round(context.Background(), s); err != nil || len(rep.Predictions) != 0 {
		t.Errorf("without refusals: %v, %v", rep.Predictions, err)
	}
}
