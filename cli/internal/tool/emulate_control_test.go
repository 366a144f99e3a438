package tool

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
)

// starveService is a node whose liveness needs an event steering always
// stops: its serve timer (1 s after the start) sets Served, which the
// safety property NoServe forbids, so the immediate check vetoes it at
// every retry, and the liveness property Served needs it. Its liveness
// budget lifts steering 30 s (DefaultLivenessBound) after the first veto.
func starveService() Service {
	spec := node.Spec{
		Name:     "starve",
		New:      func() node.Service { return &starveState{} },
		Messages: []node.Message{starveMsg{}},
		Properties: []node.Property{
			node.Always("NoServe", func(v node.View) error {
				if s, ok := v.Service(1).(*starveState); ok && s.Served {
					return errors.New("n1 served")
				}
				return nil
			}),
			node.Eventually("Served", func(v node.View) error {
				if s, ok := v.Service(1).(*starveState); !ok || !s.Served {
					return errors.New("n1 not served")
				}
				return nil
			}),
		},
	}
	return Service{Spec: spec, Workload: func(node.ID, bool) []node.Message { return nil }}
}

type starveState struct {
	node.NopHandlers
	Served bool
}

func (s *starveState) Init(env node.Env)                  { env.SetTimer("serve", time.Second) }
func (s *starveState) HandleTimer(env node.Env, _ string) { s.Served = true }

type starveMsg struct{}

func (starveMsg) MessageType() string { return "starve.Msg" }

// The summary of a steered run says what steering cost liveness against
// its control run, and that steering lifted for Served: vetoed from the
// first serve on, it was lifted at the first retry past the bound and ran.
// Two runs print the same, byte for byte (the wall times aside).
func TestEmulateSummaryReportsLiftsAndLivenessCost(t *testing.T) {
	args := []string{"emulate", "--service", "starve", "--nodes", "1", "--duration", "2m", "--churn", "0", "--immediate"}
	code, first, stderr := runProgram(Program{Services: []Service{starveService()}}, args...)
	if code != exitOK {
		t.Fatalf("emulate: exit %d %s", code, stderr)
	}
	for _, want := range []string{
		"             steering lifted: Served failing 30.5s (1 lift); 5s lifted in all\n",
		"    Served  holds\n  liveness:  1 of 1 hold (unsteered: 1 of 1); steering cost 0\n",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("summary lacks %q:\n%s", want, first)
		}
	}
	_, second, _ := runProgram(Program{Services: []Service{starveService()}}, args...)
	if withoutWall(first) != withoutWall(second) {
		t.Errorf("two runs differ:\n%s\n%s", first, second)
	}
	code, js, stderr := runProgram(Program{Services: []Service{starveService()}}, append(args, "--json")...)
	if code != exitOK {
		t.Fatalf("emulate --json: exit %d %s", code, stderr)
	}
	for _, want := range []string{`"liveness_cost":{"holds":1,"of":1,"control":true,"unsteered_holds":1,"cost":0,`,
		`"lifts":1,"lifts_expired":0,"lifted_seconds":5,"lifts_by_property":{"Served":{"lifts":1,"longest_failing_seconds":30.5}}`} {
		if !strings.Contains(js, want) {
			t.Errorf("--json lacks %s:\n%s", want, js)
		}
	}
	_, js2, _ := runProgram(Program{Services: []Service{starveService()}}, append(args, "--json")...)
	if stripWall(t, js) != stripWall(t, js2) {
		t.Error("two --json runs differ")
	}
	code, noControl, _ := runProgram(Program{Services: []Service{starveService()}}, append(args, "--control=false")...)
	if code != exitOK || !strings.Contains(noControl, "  liveness:  1 of 1 hold (no control run: --control=false)\n") {
		t.Errorf("--control=false: exit %d\n%s", code, noControl)
	}
}

// withoutWall drops the summary's wall-time line.
func withoutWall(s string) string {
	var keep []string
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "  time:") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

// The cost counts the properties that hold unsteered and fail steered.
func TestLivenessCostCountsWhatSteeringLost(t *testing.T) {
	steered := []emulation.LivenessResult{{Name: "A", Holds: true}, {Name: "B"}, {Name: "C"}}
	control := &emulation.Result{Liveness: []emulation.LivenessResult{{Name: "A", Holds: true}, {Name: "B", Holds: true}, {Name: "C"}}}
	want := &livenessCost{Holds: 1, Of: 3, Control: true, UnsteeredHolds: 2, Cost: 1, Lost: []string{"B"}}
	if got := costOf(steered, control); !reflect.DeepEqual(got, want) {
		t.Fatalf("cost %+v, want %+v", got, want)
	}
	var b strings.Builder
	printLivenessCost(&b, want)
	if got := b.String(); got != "  liveness:  1 of 3 hold (unsteered: 2 of 3); steering cost 1 (B)\n" {
		t.Fatalf("line %q", got)
	}
}
