package cli_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/cli"
	"github.com/seed6eee2ec7/crystalball/node"
)

// configured is a service whose Configure records the corrections of the
// run in its Options and its summary, so the run shows that the
// command line reached them through cli's types.
func configured() cli.Service {
	configure := func(fixes []string, nodes int) (cli.Service, error) {
		for _, f := range fixes {
			if f != "loud" && f != "all" {
				return cli.Service{}, cli.UsageErrorf("no correction %q", f)
			}
		}
		return cli.Service{
			Name:     "configured",
			Spec:     quietSpec(),
			Workload: func(node.ID, bool) []node.Message { return nil },
			Summarize: func(node.View) []cli.Figure {
				return []cli.Figure{{Name: "nodes", Value: nodes}, {Name: "fixes", Value: len(fixes)}}
			},
			Options: "fixes=" + strings.Join(fixes, "+") + ",nodes=" + strconv.Itoa(nodes),
		}, nil
	}
	s, _ := configure(nil, 0)
	s.Configure, s.Fixes = configure, []string{"loud"}
	return s
}

// TestProgramRunsConfiguredServices: a Service's Configure, Summarize
// and Options reach the subcommands (emulate's JSON), and an error of
// Configure is bad usage.
func TestProgramRunsConfiguredServices(t *testing.T) {
	prog := cli.Program{Services: []cli.Service{configured()}}
	var out, errb bytes.Buffer
	args := []string{"emulate", "--fix", "loud", "--nodes", "3", "--duration", "1m", "--json", "--quiet"}
	if code := prog.Run(args, &out, &errb); code != 0 {
		t.Fatalf("%v: status %d: %s", args, code, errb.String())
	}
	var res struct {
		Service string       `json:"service"`
		Options string       `json:"options"`
		Summary []cli.Figure `json:"summary"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out.String())
	}
	want := []cli.Figure{{Name: "nodes", Value: 3}, {Name: "fixes", Value: 1}}
	if res.Service != "configured" || res.Options != "fixes=loud,nodes=3" || !slices.Equal(res.Summary, want) {
		t.Errorf("emulate --json: service %q, options %q, summary %v; want configured, fixes=loud,nodes=3, %v",
			res.Service, res.Options, res.Summary, want)
	}
	errb.Reset()
	if code := prog.Run([]string{"emulate", "--fix", "quiet", "--quiet"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `no correction "quiet"`) {
		t.Errorf("an unknown correction: status %d: %s", code, errb.String())
	}
	errb.Reset()
	if code := prog.Run([]string{"emulate", "--help"}, &out, &errb); !strings.Contains(errb.String(), "configured: loud") {
		t.Errorf("--fix's help does not list the service's Fixes (status %d): %s", code, errb.String())
	}
}
