package replayed_test

import (
	"fmt"
	"maps"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/replayed"
	"github.com/vmihailenco/msgpack/v5"
)

// The tests' object is a small bank written once (bank) and served two
// ways: by hand, as a node.Service with exported state and Recover
// (handBank), and through the adapter, as an opaque Object (objBank).
// Both must behave alike in every shell.

// Pay is an application call: pay Amount to To. Credit is the message
// that carries it.
type (
	Pay struct {
		To     node.ID
		Amount int
	}
	Credit struct{ Amount int }
)

func (Pay) MessageType() string    { return "bank.Pay" }
func (Credit) MessageType() string { return "bank.Credit" }

var bankMessages = []node.Message{Pay{}, Credit{}}

// bank is the protocol. Balance and Sent are kept on stable storage;
// ticks is state no property or handler reads (a library's internal
// counter): the adapter leaves the ticks out of its log.
type bank struct {
	Balance  int
	Sent     map[node.ID]int
	Received int
	Audits   int
	Broken   int
	ticks    int
}

func newBank() *bank { return &bank{Balance: 10, Sent: map[node.ID]int{}} }

func (b *bank) Init(env node.Env) { env.SetTimer("tick", time.Second) }

func (b *bank) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	if c, ok := msg.(Credit); ok {
		b.Balance += c.Amount
		b.Received++
	}
}

func (b *bank) HandleTimer(env node.Env, name string) {
	switch name {
	case "tick":
		b.ticks++
		env.SetTimer("tick", time.Second)
	case "audit":
		b.Audits++
	}
}

func (b *bank) HandleApp(env node.Env, call node.Message) {
	p, ok := call.(Pay)
	if !ok || p.Amount > b.Balance || p.To == env.Self() {
		return
	}
	b.Balance -= p.Amount
	b.Sent[p.To] += p.Amount
	env.Send(p.To, Credit{p.Amount})
	// A jittered audit: the handler draws from the node's random source.
	env.SetTimer("audit", 100*time.Millisecond+time.Duration(env.Rand().IntN(50))*time.Millisecond)
}

func (b *bank) HandleTransportError(env node.Env, peer node.ID) { b.Broken++ }

// view is what the bank exposes: its exported fields, copied.
type view struct {
	Balance  int
	Sent     map[node.ID]int
	Received int
	Audits   int
	Broken   int
}

func (b *bank) view() view {
	return view{Balance: b.Balance, Sent: maps.Clone(b.Sent), Received: b.Received, Audits: b.Audits, Broken: b.Broken}
}

// durable is what a bank keeps on stable storage.
type durable struct {
	Balance int
	Sent    map[node.ID]int
}

// handBank is the hand-written service.
type handBank struct{ bank }

func (h *handBank) Recover(previous node.Service) {
	p := previous.(*handBank)
	h.Balance, h.Sent = p.Balance, maps.Clone(p.Sent)
}

func (h *handBank) view() view { return h.bank.view() }

// Clone implements node.Cloner, as a hand-written service's fast path.
func (h *handBank) Clone() node.Service {
	c := *h
	c.Sent = maps.Clone(h.Sent)
	return &c
}

// objBank is the same bank as an opaque object.
type objBank struct{ *bank }

func (o objBank) Observe() view { return o.view() }

func (o objBank) AppendDurable(dst []byte) []byte {
	b, err := msgpack.Marshal(durable{o.Balance, o.Sent})
	if err != nil {
		panic(err)
	}
	return append(dst, b...)
}

// imgBank also writes images of itself (replayed.Rebaser): all of its
// state but the ticks no one reads.
type imgBank struct{ objBank }

func (o imgBank) AppendImage(dst []byte) ([]byte, bool) {
	b, err := msgpack.Marshal(image{o.Balance, o.Sent, o.Received, o.Audits, o.Broken})
	if err != nil {
		panic(err)
	}
	return append(append(dst, 'I'), b...), true
}

type image struct {
	Balance                  int
	Sent                     map[node.ID]int
	Received, Audits, Broken int
}

func newImgBank(self node.ID, d []byte) (replayed.Object[view], error) {
	if len(d) == 0 || d[0] != 'I' {
		o, err := newObjBank(self, d)
		if err != nil {
			return nil, err
		}
		return imgBank{o.(objBank)}, nil
	}
	var im image
	if err := msgpack.Unmarshal(d[1:], &im); err != nil {
		return nil, fmt.Errorf("bank: image: %w", err)
	}
	if im.Sent == nil {
		im.Sent = map[node.ID]int{}
	}
	return imgBank{objBank{&bank{Balance: im.Balance, Sent: im.Sent, Received: im.Received, Audits: im.Audits, Broken: im.Broken}}}, nil
}

func newObjBank(self node.ID, d []byte) (replayed.Object[view], error) {
	b := newBank()
	if d != nil {
		var st durable
		if err := msgpack.Unmarshal(d, &st); err != nil {
			return nil, fmt.Errorf("bank: durable bytes: %w", err)
		}
		b.Balance, b.Sent = st.Balance, st.Sent
		if b.Sent == nil {
			b.Sent = map[node.ID]int{}
		}
	}
	return objBank{b}, nil
}

// bankAdapter returns an adapter of the bank; with images, one that
// rebases every 4 logged inputs.
func bankAdapter(keepEvery bool, images ...bool) *replayed.Adapter[view] {
	cfg := replayed.Config[view]{Name: "bank", New: newObjBank, Messages: bankMessages, KeepEveryInput: keepEvery}
	if len(images) > 0 && images[0] {
		cfg.New, cfg.RebaseEvery = newImgBank, 4
	}
	a, err := replayed.New(cfg)
	if err != nil {
		panic(err)
	}
	return a
}

// Received at most once: a property the explorer violates at a known
// depth.
func receivedAtMostOnce(get func(node.Service) (view, bool)) node.Property {
	return node.Property{Name: "ReceivedAtMostOnce", Kind: node.Safety, Check: func(v node.View) error {
		for _, id := range v.Nodes() {
			if b, ok := get(v.Service(id)); ok && b.Received > 1 {
				return fmt.Errorf("%v received %d payments", id, b.Received)
			}
		}
		return nil
	}}
}

func handSpec() node.Spec {
	return node.Spec{Name: "bank", New: func() node.Service { return &handBank{*newBank()} }, Messages: bankMessages,
		Properties: []node.Property{receivedAtMostOnce(func(s node.Service) (view, bool) {
			h, ok := s.(*handBank)
			if !ok {
				return view{}, false
			}
			return h.view(), true
		})}}
}

func adaptedSpec(a *replayed.Adapter[view]) node.Spec {
	return node.Spec{Name: "bank", New: a.Factory(), Messages: bankMessages,
		Properties: []node.Property{receivedAtMostOnce(replayed.Observed[view])}}
}

// bankWorkload: every node pays the next one twice.
func bankWorkload(n int) func(id node.ID, restart bool) []node.Message {
	return func(id node.ID, restart bool) []node.Message {
		to := id%node.ID(n) + 1
		return []node.Message{Pay{To: to, Amount: 3}, Pay{To: to, Amount: 4}}
	}
}
