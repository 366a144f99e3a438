package tool

import (
	"errors"
	"flag"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// TestProgramRejectsBrokenCommandsAndModels: a Program whose own commands
// or models break their contract is a programming error, exit status 1
// with one line naming the culprit, before any command runs.
func TestProgramRejectsBrokenCommandsAndModels(t *testing.T) {
	run := func([]string, io.Writer, io.Writer) error { return nil }
	model := func(name string, flags ...string) Model {
		return Model{Name: name, Flags: func(fs *flag.FlagSet) func(bool) (*ModelSearch, error) {
			for _, f := range flags {
				fs.Int(f, 0, "a model's flag")
			}
			return func(bool) (*ModelSearch, error) { return nil, errors.New("unused") }
		}}
	}
	cases := []struct {
		prog Program
		want string
	}{
		{Program{}, "no service given"},
		{Program{Services: []Service{myTree()}, Commands: []Command{{Name: "check", Run: run}}}, `command "check" is a built-in command`},
		{Program{Services: []Service{myTree()}, Commands: []Command{{Name: "go", Run: run}, {Name: "go", Run: run}}}, `command "go" is given twice`},
		{Program{Services: []Service{myTree()}, Commands: []Command{{Name: "two words", Run: run}}}, "has spaces"},
		{Program{Services: []Service{myTree()}, Commands: []Command{{Name: "go"}}}, `command "go": Run is nil`},
		{Program{Services: []Service{myTree()}, Models: []Model{model("m", "nodes")}}, `model "m": its flags: check flag redefined: nodes`},
		{Program{Services: []Service{myTree()}, Models: []Model{model("a", "size"), model("b", "size")}}, `model "b": its flags: check flag redefined: size`},
		{Program{Services: []Service{myTree()}, Models: []Model{model("m"), model("m")}}, `model "m" is given twice`},
		{Program{Services: []Service{myTree()}, Models: []Model{{Name: "m"}}}, `model "m": Flags is nil`},
	}
	for _, c := range cases {
		code, stdout, stderr := runProgram(c.prog, "version")
		if code != exitFailure || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%+v: exit %d, stdout %q, stderr %q; want exit 1 and one line containing %q", c.prog, code, stdout, stderr, c.want)
		}
	}
}

// counterModel is a hand-written model for check --model: a counter
// that counts up to limit.
type counterModel struct{ limit int }

func (c counterModel) Init() []int { return []int{0} }

func (c counterModel) Actions(s int, out []consequence.Action[string]) []consequence.Action[string] {
	if s < c.limit {
		out = append(out, consequence.Action[string]{Act: "inc"})
	}
	return out
}

func (c counterModel) Next(s int, a string) (int, bool) { return s + 1, true }

func (c counterModel) Fingerprint(s int) node.Hash { return node.Hash{Lo: uint64(s) + 1} }

func (c counterModel) LocalFingerprint(s int, _ int) node.Hash { return c.Fingerprint(s) }

// TestProgramModelIsChecked: a Program's own model runs under check
// --model with its own flags, reports its violation with the nodes and
// options it gave, lists itself in --model's help, and its builder's
// error is bad usage; a program without models says so.
func TestProgramModelIsChecked(t *testing.T) {
	m := Model{Name: "counter", Flags: func(fs *flag.FlagSet) func(bool) (*ModelSearch, error) {
		limit := fs.Int("limit", 5, "how far the counter counts")
		bad := fs.Int("bad", 3, "the value the property forbids")
		return func(symmetry bool) (*ModelSearch, error) {
			if *limit < 0 {
				return nil, errors.New("--limit must not be negative")
			}
			props := []consequence.Property[int]{{Name: "Below", Kind: node.Safety, Check: func(s int) error {
				if s >= *bad {
					return errors.New("too far")
				}
				return nil
			}}}
			return NewModelSearch[int, string](counterModel{*limit}, props, 1, "limit="+strconv.Itoa(*limit)), nil
		}
	}}
	prog := Program{Services: []Service{myTree()}, Models: []Model{m}}
	code, stdout, stderr := runProgram(prog, "check", "--model", "counter", "--limit", "4", "--bad", "3")
	if code != exitOK || !strings.Contains(stdout, "counter (limit=4), 1 nodes") || !strings.Contains(stdout, "VIOLATION Below (safety) at depth 3") {
		t.Errorf("check --model counter: exit %d:\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = runProgram(prog, "check", "--model", "counter", "--limit", "-1")
	if code != exitUsage || !strings.Contains(stderr, "--limit must not be negative") {
		t.Errorf("a builder's error: exit %d, %q", code, stderr)
	}
	code, _, stderr = runProgram(prog, "check", "--model", "nope")
	if code != exitUsage || !strings.Contains(stderr, `unknown --model "nope" (known: counter)`) {
		t.Errorf("unknown model: exit %d, %q", code, stderr)
	}
	code, stdout, _ = runProgram(prog, "help", "check")
	if code != exitOK || !strings.Contains(stdout, "instead of a service (counter)") || !strings.Contains(stdout, "how far the counter counts") {
		t.Errorf("help check lists no model or its flags:\n%s", stdout)
	}
	code, _, stderr = runProgram(Program{Services: []Service{myTree()}}, "check", "--model", "counter")
	if code != exitUsage || !strings.Contains(stderr, "this program has no model") {
		t.Errorf("no models: exit %d, %q", code, stderr)
	}
}
