package layer

import (
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The node package's test services, for the pipeline's tests.

type note struct{ Text string }

func (note) MessageType() string { return "test.note" }

// recorder logs what it handles and exercises every Env method.
type recorder struct {
	Log   []string
	Draws []int
}

func (r *recorder) Init(env node.Env) {
	r.Log = append(r.Log, "init")
	env.SetTimer("tick", time.Second)
}
func (r *recorder) HandleMessage(env node.Env, from node.ID, m node.Message) {
	r.Log = append(r.Log, "msg "+m.(note).Text+" from "+from.String())
	if m.(note).Text == "echo" {
		env.Send(from, note{Text: "echoed"})
	}
	if m.(note).Text == "datagram" {
		env.Send(from, note{Text: "first"})
		env.SendDatagram(from, note{Text: "second"})
	}
	if m.(note).Text == "cancel" {
		env.CancelTimer("tick")
	}
}
func (r *recorder) HandleTimer(env node.Env, name string) {
	r.Log = append(r.Log, "timer "+name)
	r.Draws = append(r.Draws, env.Rand().IntN(1000))
	if env.TimerScheduled(name) {
		panic("a firing timer must be unscheduled when its handler runs")
	}
	env.SetTimer(name, time.Second)
}
func (r *recorder) HandleApp(env node.Env, call node.Message) {
	r.Log = append(r.Log, "app "+call.(note).Text)
}
func (r *recorder) HandleTransportError(env node.Env, peer node.ID) {
	r.Log = append(r.Log, "error "+peer.String())
}

func newRecorderCore(t *testing.T, seed uint64) *node.Core {
	t.Helper()
	c, err := node.NewCore(node.CoreConfig{ID: 5, Factory: func() node.Service { return &recorder{} }, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var t0 = time.Unix(1000, 0).UTC()

// ledger keeps Disk across resets (it is Durable) and loses Memory.
type ledger struct {
	Disk   []string
	Memory []string
	// SawAtInit is what Init found on disk: Recover must run before it.
	SawAtInit []string
	Recovers  int
}

func (l *ledger) Init(env node.Env) { l.SawAtInit = slices.Clone(l.Disk) }
func (l *ledger) HandleMessage(env node.Env, from node.ID, m node.Message) {
	l.Disk = append(l.Disk, m.(note).Text)
	l.Memory = append(l.Memory, m.(note).Text)
}
func (l *ledger) HandleTimer(env node.Env, name string)           {}
func (l *ledger) HandleApp(env node.Env, call node.Message)       {}
func (l *ledger) HandleTransportError(env node.Env, peer node.ID) {}
func (l *ledger) Recover(previous node.Service) {
	p := previous.(*ledger)
	l.Disk = slices.Clone(p.Disk)
	l.Recovers = p.Recovers + 1
}

var _ node.Durable = (*ledger)(nil)

func newLedgerCore(t *testing.T) *node.Core {
	t.Helper()
	c, err := node.NewCore(node.CoreConfig{ID: 3, Factory: func() node.Service { return &ledger{} }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
