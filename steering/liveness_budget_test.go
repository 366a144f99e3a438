package steering_test

import (
	"errors"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// starveState is a node whose liveness needs an event steering always
// stops: its "serve" timer (due 1 s after the start) sets Served, which
// the safety property NoServe forbids, so the immediate check vetoes it
// at every retry; the liveness property Served needs it. Its "poke"
// timer (due at PokeAt) sets Poked, which NoPoke forbids: an event
// steering stops once it has resumed.
type starveState struct {
	node.NopHandlers
	Served, Poked bool
}

const pokeAt = 50 * time.Second

func (s *starveState) Init(env node.Env) {
	env.SetTimer("serve", time.Second)
	env.SetTimer("poke", pokeAt)
}

func (s *starveState) HandleTimer(env node.Env, name string) {
	switch name {
	case "serve":
		s.Served = true
	case "poke":
		s.Poked = true
	}
}

type starveMsg struct{}

func (starveMsg) MessageType() string { return "starve.Msg" }

// starveSpec is starveState's service with the properties more.
func starveSpec(more ...node.Property) node.Spec {
	self := func(v node.View) *starveState { s, _ := v.Service(1).(*starveState); return s }
	return node.Spec{
		Name:     "starve",
		New:      func() node.Service { return &starveState{} },
		Messages: []node.Message{starveMsg{}},
		Properties: append([]node.Property{
			node.Always("NoServe", func(v node.View) error {
				if s := self(v); s != nil && s.Served {
					return errors.New("n1 served")
				}
				return nil
			}),
			node.Always("NoPoke", func(v node.View) error {
				if s := self(v); s != nil && s.Poked {
					return errors.New("n1 poked")
				}
				return nil
			}),
			node.Eventually("Served", func(v node.View) error {
				if s := self(v); s == nil || !s.Served {
					return errors.New("n1 not served")
				}
				return nil
			}),
		}, more...),
	}
}

// starveRun is an emulation of starveSpec(more...) with the immediate
// check on, stepped to the first veto, whose time it returns with the
// slice the interventions' times go to.
func starveRun(t *testing.T, more ...node.Property) (*emulation.Emulator, time.Duration, *[]time.Duration) {
	t.Helper()
	cfg := emulation.Config{Spec: starveSpec(more...), Nodes: 1, Seed: 1, Duration: 2 * time.Minute,
		Steering: &emulation.SteeringConfig{Immediate: true}}
	vetoed := new([]time.Duration)
	cfg.Steering.OnIntervention = func(iv emulation.Intervention) { *vetoed = append(*vetoed, iv.At) }
	em, err := emulation.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for len(*vetoed) == 0 && em.Step() {
	}
	if len(*vetoed) == 0 {
		t.Fatal("the serve timer was never vetoed")
	}
	// The node starts when the seed says; its first veto opens the
	// obligations in its view.
	return em, (*vetoed)[0], vetoed
}

// statusAt runs em until d and returns node 1's steering status.
func statusAt(t *testing.T, em *emulation.Emulator, d time.Duration) steering.LayerStatus {
	t.Helper()
	if err := em.RunUntil(emulation.Epoch.Add(d)); err != nil {
		t.Fatal(err)
	}
	return em.Steering(1).Status()
}

// A property steering starves is lifted: the immediate check vetoes the
// serve timer from t0 on (postponed every 500 ms), the obligation of
// Served opens then, and at the first instant past its bound (30 s, the
// default for a plain liveness property) the node lifts its steering;
// the timer's next retry (t0 + 30.5 s) runs, Served holds, and steering
// resumes once the lift has lasted MinLift (5 s) — and vetoes the poke
// timer (t0 + 49 s) again.
func TestLivenessBudgetLiftsStarvedProperty(t *testing.T) {
	em, t0, vetoes := starveRun(t)
	at := func(d time.Duration) steering.LayerStatus { t.Helper(); return statusAt(t, em, d) }
	bound, minLift := steering.DefaultLivenessBound, steering.DefaultMinLift
	liftAt := t0 + bound + time.Nanosecond
	if st := at(liftAt - time.Nanosecond); st.Lift != nil || st.Lifts != 0 {
		t.Fatalf("lifted before the bound passed: %+v", st.Lift)
	}
	st := at(liftAt)
	want := steering.LiftRecord{Property: "Served", Since: emulation.Epoch.Add(liftAt), FailingSince: emulation.Epoch.Add(t0),
		FailingSeconds: (bound + time.Nanosecond).Seconds()}
	if st.Lift == nil || *st.Lift != want || st.Lifts != 1 {
		t.Fatalf("at %v: lift %+v (lifts %d), want %+v", liftAt, st.Lift, st.Lifts, want)
	}
	retry := t0 + bound + steering.DefaultPostponeDelay
	if at(retry - time.Nanosecond); em.View().Service(1).(*starveState).Served {
		t.Fatal("served before the retry after the lift")
	}
	if st = at(retry); !em.View().Service(1).(*starveState).Served || st.Lift == nil {
		t.Fatalf("at the retry after the lift: served %v, lift %+v; want the retry run and the lift lasting MinLift",
			em.View().Service(1).(*starveState).Served, st.Lift)
	}
	if st = at(liftAt + minLift - time.Nanosecond); st.Lift == nil {
		t.Fatal("steering resumed before MinLift")
	}
	st = at(liftAt + minLift)
	if st.Lift != nil || st.Lifts != 1 || st.LiftsExpired != 0 || st.LiftedSeconds != minLift.Seconds() {
		t.Fatalf("after MinLift: lift %+v, lifts %d, expired %d, lifted %vs; want resumed after one lift of %v", st.Lift, st.Lifts, st.LiftsExpired, st.LiftedSeconds, minLift)
	}
	c := st.LiftsByProperty["Served"]
	if c.Lifts != 1 || c.Expired != 0 || c.LongestFailingSeconds != (bound+steering.DefaultPostponeDelay).Seconds() {
		t.Fatalf("LiftsByProperty[Served] = %+v, want one lift, closed 30.5 s after it opened", c)
	}
	// The serve timer was vetoed at t0 (its retries until the lift are
	// not reported again), then the poke, which steering stops again.
	st = at(time.Minute + 10*time.Second)
	poke := t0 - time.Second + pokeAt
	vetoed := *vetoes
	if len(vetoed) != 2 || vetoed[1] != poke || st.Vetoes != 2 || st.Lifts != 1 {
		t.Fatalf("interventions at %v, %d vetoes, %d lifts; want the serve timer at %v and the poke at %v vetoed and no new lift", vetoed, st.Vetoes, st.Lifts, t0, poke)
	}
	if s := em.View().Service(1).(*starveState); s.Poked {
		t.Fatal("the poke ran: steering did not resume")
	}
}

// A lift whose property fails without steering too expires: Never holds
// in no state, so its lift (with Served's, at the same instant) outlasts
// Served's, and ends once it has lasted Never's bound; steering resumes
// with one lift expired. Meanwhile every event runs: the poke too.
func TestLivenessBudgetLiftExpires(t *testing.T) {
	never := node.Eventually("Never", func(node.View) error { return errors.New("never") })
	em, t0, _ := starveRun(t, never)
	bound := steering.DefaultLivenessBound
	liftAt := t0 + bound + time.Nanosecond
	st := statusAt(t, em, liftAt)
	if st.Lift == nil || st.Lift.Property != "Served" || st.Lifts != 1 || st.LiftsByProperty["Never"].Lifts != 1 {
		t.Fatalf("at %v: lift %+v, lifts %d %v; want one lift, by Served and Never", liftAt, st.Lift, st.Lifts, st.LiftsByProperty)
	}
	if st = statusAt(t, em, liftAt+bound-time.Nanosecond); st.Lift == nil || st.LiftsExpired != 0 {
		t.Fatalf("the lift ended before it expired: %+v, %d expired", st.Lift, st.LiftsExpired)
	}
	st = statusAt(t, em, liftAt+bound)
	never1 := steering.LiftCount{Lifts: 1, Expired: 1, LongestFailingSeconds: (2*bound + time.Nanosecond).Seconds()}
	if st.Lift != nil || st.Lifts != 1 || st.LiftsExpired != 1 || st.LiftsByProperty["Never"] != never1 || st.LiftedSeconds != bound.Seconds() {
		t.Fatalf("after expiry: lift %+v, lifts %d, expired %d, by property %v, lifted %vs; want resumed, %+v for Never",
			st.Lift, st.Lifts, st.LiftsExpired, st.LiftsByProperty, st.LiftedSeconds, never1)
	}
	if s := em.View().Service(1).(*starveState); !s.Served || !s.Poked {
		t.Fatalf("during the lift: %+v; want the serve and poke timers run", s)
	}
}
