package experiments

import (
	"context"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/services/randtree/paper"
)

// The live state of Figure 2's first row comes out the same whether its
// steps run in the actor model or in emulation over the wide-area network,
// and consequence prediction from the emulated one finds the paper's
// inconsistency on the paper's path.
func TestFigure2EmulatedMatchesTheFigure(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	model, err := paper.Figure2(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{1, 2, 3} {
		emulated, inFlight, err := figure2Emulated(spec, seed)
		if err != nil {
			t.Fatalf("seed=%d: %v", seed, err)
		}
		for i := range model {
			a, err := node.DecodeCheckpoint(model[i].Bytes, spec.New)
			if err != nil {
				t.Fatal(err)
			}
			b, err := node.DecodeCheckpoint(emulated[i].Bytes, spec.New)
			if err != nil {
				t.Fatal(err)
			}
			as, bs := a.Service.(*randtree.State), b.Service.(*randtree.State)
			if as.Root != bs.Root || as.Parent != bs.Parent || !equalNodeIDs(as.Children, bs.Children) || !equalNodeIDs(as.Siblings, bs.Siblings) {
				t.Errorf("seed=%d: %v is %v in emulation, %v in the actor model", seed, model[i].ID, bs, as)
			}
		}
		m, err := consequence.NewActorModelFromCheckpoints(spec, emulated, inFlight, consequence.ActorOptions{
			Workload: paper.Figure2Workload, Faults: consequence.Faults{Resets: 1, SilentResets: true}})
		if err != nil {
			t.Fatal(err)
		}
		var props []consequence.Property[*consequence.GlobalState]
		for _, p := range m.Properties() {
			if p.Name == randtree.ChildrenSiblingsDisjoint {
				props = append(props, p)
			}
		}
		res, err := consequence.NewChecker(m).Properties(props...).
			Strategy(consequence.Consequence).MaxStates(100_000).StopOnViolation(true).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		v, ok := res.Violated(randtree.ChildrenSiblingsDisjoint)
		if !ok || v.Depth != 5 || v.Path[len(v.Path)-1].Act.String() != "n9 deliver randtree.UpdateSibling from n1" {
			t.Fatalf("seed=%d: %v (%d states)", seed, v, res.Unique)
		}
	}
}

func equalNodeIDs(a, b []node.ID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
