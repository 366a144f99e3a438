package nodetest

import (
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// ledger is the determinism tests' service: a node counts the rumors it
// hears per sender and, on its timer, tells every peer it heard from how
// many it has. Each fault is a way a handler stops being a function of
// its encoded state and its event.
type ledger struct {
	node.NopHandlers
	Counts map[node.ID]int
	Stamp  time.Time
	Seq    int

	fault  string
	hidden int // the fault "hidden": state the handler keeps outside the encoding
}

// ledgerGlobal is the fault "global": a counter every node shares.
var ledgerGlobal int

func (l *ledger) Init(env node.Env) {
	l.Counts = map[node.ID]int{}
	env.SetTimer("tell", time.Second)
}

func (l *ledger) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	l.Counts[from]++
	switch l.fault {
	case "wallclock":
		l.Stamp = time.Now() // the fault: env.Now() is the event's time
	case "global":
		ledgerGlobal++
		l.Seq = ledgerGlobal
	case "hidden":
		l.hidden++
		l.Seq = l.hidden
	}
}

func (l *ledger) HandleTimer(env node.Env, _ string) {
	env.SetTimer("tell", time.Second)
	if l.fault == "maporder" {
		for id := range l.Counts { // the fault: Go's map order is random
			env.Send(id, rumor{N: l.Counts[id]})
		}
		return
	}
	for id := node.ID(1); id <= 3; id++ {
		if n, ok := l.Counts[id]; ok || id != env.Self() {
			env.Send(id, rumor{N: n})
		}
	}
}

func (l *ledger) HandleApp(env node.Env, _ node.Message) {
	for id := node.ID(1); id <= 3; id++ {
		if id != env.Self() {
			env.Send(id, rumor{N: l.Seq})
		}
	}
}

func (l *ledger) Clone() node.Service {
	c := *l
	if l.fault == "emptytonil" && len(l.Counts) == 0 {
		c.Counts = nil // the fault: an empty map cloned to nil
		return &c
	}
	c.Counts = make(map[node.ID]int, len(l.Counts))
	for k, v := range l.Counts {
		c.Counts[k] = v
	}
	return &c
}

func ledgerSpec(fault string) node.Spec {
	return node.Spec{Name: "ledger", New: func() node.Service { return &ledger{fault: fault} }, Messages: []node.Message{rumor{}, start{}}}
}

func TestConformanceAcceptsADeterministicLedger(t *testing.T) {
	Conformance(t, ledgerSpec(""), ConformanceCalls(gossipCalls))
}

// Each fault makes the service's behaviour something other than a
// function of its encoded state and the event; Conformance must say so,
// naming the event and the first field (or send) that differs.
func TestConformanceCatchesANonDeterministicHandler(t *testing.T) {
	cases := []struct{ fault, want string }{
		{"wallclock", "the service is not deterministic: message rumor from n"},
		{"wallclock", "the states reached differ: state.Stamp: "},
		{"maporder", "the service is not deterministic: timer tell, stepped twice from one state, "},
		{"global", "the service is not deterministic: message rumor from n"},
		{"global", "state.Seq: "},
		{"hidden", "on the node and on a copy restored from its checkpoint: the states reached differ: state.Seq: "},
		{"hidden", "an unexported field"},
	}
	for _, c := range cases {
		t.Run(c.fault, func(t *testing.T) {
			err := checkConformance(ledgerSpec(c.fault), ConformanceCalls(gossipCalls))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("fault %s: %v\nwant it to contain %q", c.fault, err, c.want)
			}
		})
	}
}

// A Clone that turns an empty map into nil encodes differently: the
// message names the field and both values, decoded, not two hex dumps.
func TestConformanceNamesTheFieldAWrongCloneChanges(t *testing.T) {
	err := checkConformance(ledgerSpec("emptytonil"), ConformanceCalls(gossipCalls))
	want := "the clone differs from the original: state.Counts: map[] (empty, not nil) vs nil"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("empty map cloned to nil: %v\nwant it to contain %q", err, want)
	}
}
