package mutate

import (
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fixture is the test service (testdata/svc).
var fixture = Target{Service: "svc", Dir: "testdata/svc"}

func TestSitesCoverEveryOperatorAndOnlyHandlers(t *testing.T) {
	p, err := parseTarget(".", fixture)
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]int{}
	for _, s := range p.sites {
		ops[s.op]++
		if s.fn == "check" {
			t.Errorf("site in a property check: %+v", s)
		}
	}
	for _, op := range Ops {
		if ops[op] == 0 {
			t.Errorf("no %s site in the fixture; sites by operator: %v", op, ops)
		}
	}
}

func TestSelectIsDeterministicAndSeeded(t *testing.T) {
	a, err := Select(".", []Target{fixture}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Select(".", []Target{fixture}, 1, 1)
	if !slices.Equal(a, b) {
		t.Fatalf("same seed, different corpora:\n%v\n%v", a, b)
	}
	for i, m := range a {
		if m.ID != i+1 {
			t.Fatalf("IDs not numbered from 1: %v", a)
		}
	}
	all, _ := Select(".", []Target{fixture}, 1, 100)
	differs := false
	for seed := uint64(2); seed < 20 && !differs; seed++ {
		c, _ := Select(".", []Target{fixture}, seed, 1)
		differs = !slices.Equal(a, c)
	}
	if len(all) > len(a) && !differs {
		t.Fatal("the seed does not change the selection")
	}
	if _, err := Select(".", []Target{fixture}, 1, 0); err == nil {
		t.Fatal("Select accepted zero mutants per operator")
	}
}

func TestSchemaAndDirectRenderParse(t *testing.T) {
	ms, err := Select(".", []Target{fixture}, 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Schema(".", []Target{fixture}, ms)
	if err != nil {
		t.Fatal(err)
	}
	src := string(files["testdata/svc/svc.go"])
	if _, err := parser.ParseFile(token.NewFileSet(), "svc.go", src, 0); err != nil {
		t.Fatalf("the schema does not parse: %v\n%s", err, src)
	}
	for _, m := range ms {
		if !strings.Contains(src, "mutschema.On("+strconv.Itoa(m.ID)+")") && !strings.Contains(src, "mutschema.Pick("+strconv.Itoa(m.ID)+",") {
			t.Errorf("mutant %d (%s: %s) has no switch in the schema:\n%s", m.ID, m.Op, m.Desc, src)
		}
		_, one, err := Direct(".", fixture, m)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(one), "mutschema") {
			t.Errorf("mutant %d's direct form uses the switch", m.ID)
		}
		if _, err := parser.ParseFile(token.NewFileSet(), "svc.go", one, 0); err != nil {
			t.Errorf("mutant %d's direct form does not parse: %v", m.ID, err)
		}
	}
	if _, err := Schema(".", []Target{fixture}, []Mutant{{ID: 1, Service: "other"}}); err == nil {
		t.Fatal("Schema accepted a mutant of an unknown service")
	}
	stale := ms[0]
	stale.Site = 10000
	if _, err := Schema(".", []Target{fixture}, []Mutant{stale}); err == nil {
		t.Fatal("Schema accepted a mutant whose site is gone")
	}
}

func TestDirectRewritesAsDescribed(t *testing.T) {
	ms, err := Select(".", []Target{fixture}, 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		OpGuardTrue:   "if true || (s.Term < from)",
		OpGuardFalse:  "if !true && (s.Term < from)",
		OpCompare:     "if s.Term <= from {",
		OpDropSend:    "if false {\n\t\tenv.Send(from, msg)",
		OpDropTimer:   "if false {\n\t\tenv.SetTimer(\"tick\", 1)",
		OpDropDurable: "if false {\n\t\ts.Term = p.Term",
	}
	for op, w := range want {
		i := slices.IndexFunc(ms, func(m Mutant) bool { return m.Op == op })
		_, src, err := Direct(".", fixture, ms[i])
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), w) {
			t.Errorf("%s (%s): want %q in\n%s", op, ms[i].Desc, w, src)
		}
	}
}
