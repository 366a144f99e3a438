package emulation_test

import (
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
)

// Data is the test service's only network message: a per-channel sequence
// number, so receivers can check FIFO order.
type Data struct{ Seq int }

func (Data) MessageType() string { return "test.data" }

// SendTo is an application call: send N Data messages to To.
type SendTo struct {
	To node.ID
	N  int
}

func (SendTo) MessageType() string { return "test.send" }

// Inc is an application call that bumps the Apps counter.
type Inc struct{}

func (Inc) MessageType() string { return "test.inc" }

// Boom is an application call whose handler panics.
type Boom struct{}

func (Boom) MessageType() string { return "test.boom" }

// tcfg configures the test service (not part of its state).
type tcfg struct {
	nodes  int           // peers are 1..nodes
	period time.Duration // gossip period; 0 = no gossip
	jitter bool          // randomise the period ±50% (from the node's Rand)
	fanout int           // messages per tick
}

// tsvc is a small gossip service: every period it sends Data to fanout
// random peers, with a sequence number per destination; it counts what it
// receives, checks per-sender FIFO order, and records transport errors.
type tsvc struct {
	Expect   map[node.ID]int // next sequence number expected per sender
	NextSeq  map[node.ID]int // next sequence number to send per peer
	Got      int
	Disorder int
	Apps     int
	Ticks    int
	Errors   []node.ID
	ErrorAt  []int64 // virtual ns since Epoch
	RecvAt   []int64 // arrival times, recorded without gossip only

	cfg *tcfg
}

func (s *tsvc) Init(env node.Env) {
	s.Expect = map[node.ID]int{}
	s.NextSeq = map[node.ID]int{}
	s.arm(env)
}

func (s *tsvc) arm(env node.Env) {
	if s.cfg.period <= 0 {
		return
	}
	d := s.cfg.period
	if s.cfg.jitter {
		d = d/2 + time.Duration(env.Rand().IntN(int(d)))
	}
	env.SetTimer("tick", d)
}

func (s *tsvc) send(env node.Env, to node.ID) {
	env.Send(to, Data{Seq: s.NextSeq[to]})
	s.NextSeq[to]++
}

func (s *tsvc) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	d := msg.(Data)
	if d.Seq != s.Expect[from] {
		s.Disorder++
	}
	s.Expect[from] = d.Seq + 1
	s.Got++
	if s.cfg.period == 0 { // scripted tests only: keep gossip states small
		s.RecvAt = append(s.RecvAt, env.Now().Sub(emulation.Epoch).Nanoseconds())
	}
}

func (s *tsvc) HandleTimer(env node.Env, name string) {
	s.Ticks++
	for i := 0; i < s.cfg.fanout; i++ {
		to := node.ID(1 + env.Rand().IntN(s.cfg.nodes))
		if to == env.Self() && s.cfg.nodes > 1 {
			continue
		}
		s.send(env, to)
	}
	s.arm(env)
}

func (s *tsvc) HandleApp(env node.Env, call node.Message) {
	s.Apps++
	switch c := call.(type) {
	case SendTo:
		for i := 0; i < c.N; i++ {
			s.send(env, c.To)
		}
	case Boom:
		panic("boom")
	}
}

func (s *tsvc) HandleTransportError(env node.Env, peer node.ID) {
	s.Errors = append(s.Errors, peer)
	s.ErrorAt = append(s.ErrorAt, env.Now().Sub(emulation.Epoch).Nanoseconds())
}

// testSpec returns the spec of tsvc with cfg and the given properties.
func testSpec(cfg tcfg, props ...node.Property) node.Spec {
	return node.Spec{
		Name:       "test",
		New:        func() node.Service { return &tsvc{cfg: &cfg} },
		Messages:   []node.Message{Data{}, SendTo{}, Inc{}, Boom{}},
		Properties: props,
	}
}

// svc returns node id's service state.
func svc(t testing.TB, e *emulation.Emulator, id node.ID) *tsvc {
	t.Helper()
	return e.Core(id).Service().(*tsvc)
}

// at returns Epoch + d.
func at(d time.Duration) time.Time { return emulation.Epoch.Add(d) }

// mustNew builds an emulator or fails the test, printing the seed.
func mustNew(t testing.TB, cfg emulation.Config) *emulation.Emulator {
	t.Helper()
	e, err := emulation.New(cfg)
	if err != nil {
		t.Fatalf("seed=%d: New: %v", cfg.Seed, err)
	}
	return e
}

// logSeedOnFailure makes every failure of t print the seed.
func logSeedOnFailure(t *testing.T, seed uint64) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("reproduce with seed=%d", seed)
		}
	})
}

func ns(d time.Duration) int64 { return d.Nanoseconds() }
