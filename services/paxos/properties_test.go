package paxos

import (
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
)

// view is a fixed set of Paxos states, as a snapshot would show them.
type view struct {
	ids    []node.ID
	states map[node.ID]*State
}

func (v *view) Nodes() []node.ID                    { return v.ids }
func (v *view) TimerScheduled(node.ID, string) bool { return false }
func (v *view) Service(id node.ID) node.Service {
	if s, ok := v.states[id]; ok {
		return s
	}
	return nil
}

// accepted returns a member state of a three-node group that accepted
// value at b and learned learned ("" for nothing).
func accepted(b Ballot, value, learned string) *State {
	s := newState(Options{}.withDefaults())
	s.Promised, s.Accepted, s.AcceptedValue, s.Learned = b, b, value, learned
	return s
}

func viewOf(states ...*State) *view {
	v := &view{states: map[node.ID]*State{}}
	for i, s := range states {
		id := node.ID(i + 1)
		v.ids = append(v.ids, id)
		v.states[id] = s
	}
	return v
}

func check(p []node.Property, v node.View) string {
	if err := p[0].Check(v); err != nil {
		return err.Error()
	}
	return "ok"
}

func TestOneValueChosen(t *testing.T) {
	b1 := Ballot{Round: 1, Node: 1}
	b3 := Ballot{Round: 1, Node: 3}
	for _, tc := range []struct {
		name string
		v    *view
		want string
	}{
		{"nothing", viewOf(newState(Options{}.withDefaults()), newState(Options{}.withDefaults())), "ok"},
		{"one value learned and accepted", viewOf(accepted(b1, "v1", "v1"), accepted(b1, "v1", ""), accepted(b3, "v1", "v1")), "ok"},
		{"two learned values", viewOf(accepted(b1, "v1", "v1"), accepted(b3, "v3", "v3"), accepted(b3, "v3", "")),
			`two values chosen: n1 learned "v1"; n2 learned "v3"; a majority accepted "v3" at 1.n3`},
		// Nobody learned v3 yet, but a majority accepted it at one ballot:
		// the decision is made.
		{"learned against accepted", viewOf(accepted(b1, "v1", "v1"), accepted(b3, "v3", ""), accepted(b3, "v3", "")),
			`two values chosen: n1 learned "v1"; a majority accepted "v3" at 1.n3`},
		// One acceptor of v3 only: not chosen.
		{"minority", viewOf(accepted(b1, "v1", "v1"), accepted(b3, "v3", ""), accepted(b1, "v1", "")), "ok"},
		// Two acceptors that accepted different ballots do not add up.
		{"different ballots", viewOf(accepted(b1, "v3", ""), accepted(Ballot{Round: 2, Node: 1}, "v3", ""), accepted(b3, "v1", "v1")), "ok"},
	} {
		if got := check(SafetyProperties(), tc.v); got != tc.want {
			t.Errorf("%s: %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// A partial view (a snapshot without n3) can miss a choice but never
// invents one, and non-members and foreign services are not counted.
func TestOneValueChosenOnPartialViews(t *testing.T) {
	b3 := Ballot{Round: 1, Node: 3}
	v := viewOf(accepted(Ballot{Round: 1, Node: 1}, "v1", "v1"), accepted(b3, "v3", ""), accepted(b3, "v3", ""))
	v.ids = v.ids[:2]
	if got := check(SafetyProperties(), v); got != "ok" {
		t.Fatalf("n1 and n2 only: %s", got)
	}
	v.ids = append(v.ids, 3, 9)
	v.states[9] = accepted(b3, "v3", "")
	delete(v.states, 3)
	if got := check(SafetyProperties(), v); got != "ok" {
		t.Fatalf("with a non-member accepting v3 and n3 absent: %s", got)
	}
}

func TestAllLearned(t *testing.T) {
	b := Ballot{Round: 1, Node: 1}
	v := viewOf(accepted(b, "v1", "v1"), accepted(b, "v1", ""), newState(Options{}.withDefaults()))
	if got, want := check(LivenessProperties(), v), "[n2 n3] have not learned a value"; got != want {
		t.Fatalf("AllLearned = %s, want %s", got, want)
	}
	v.states[2].Learned, v.states[3].Learned = "v1", "v1"
	if got := check(LivenessProperties(), v); got != "ok" {
		t.Fatalf("AllLearned = %s after everyone learned", got)
	}
}

// The explorer evaluates the properties on every state: holding, they
// allocate nothing.
func TestPropertiesDoNotAllocateWhenTheyHold(t *testing.T) {
	b := Ballot{Round: 1, Node: 1}
	v := viewOf(accepted(b, "v1", "v1"), accepted(b, "v1", "v1"), accepted(b, "v1", "v1"))
	for _, p := range Properties() {
		if n := testing.AllocsPerRun(100, func() { _ = p.Check(v) }); n != 0 {
			t.Errorf("%s allocates %v times per check", p.Name, n)
		}
	}
}

func TestSummary(t *testing.T) {
	b := Ballot{Round: 4, Node: 3}
	v := viewOf(accepted(b, "v1", "v1"), accepted(b, "v1", "v3"), newState(Options{}.withDefaults()))
	v.states[2].Round = 2
	if got, want := Summarize(v).String(), `learned 2/3, values ["v1" "v3"], 4 rounds`; got != want {
		t.Fatalf("Summarize = %s, want %s", got, want)
	}
}
