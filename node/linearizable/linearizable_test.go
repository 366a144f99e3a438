package linearizable_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/linearizable"
)

type (
	write struct {
		node.Named[write]
		K string
		V int
	}
	read struct {
		node.Named[read]
		K string
	}
	value struct {
		node.Named[value]
		V int
	}
)

var kv = linearizable.KV(linearizable.KVOps[string, int]{
	Key: func(op node.Message) string {
		switch o := op.(type) {
		case write:
			return o.K
		case read:
			return o.K
		}
		return ""
	},
	Register: linearizable.RegisterOps[int]{
		Write: func(op node.Message) (int, bool) { w, ok := op.(write); return w.V, ok },
		Read: func(op, res node.Message) (int, bool) {
			if _, ok := op.(read); !ok {
				return 0, false
			}
			v, _ := res.(value)
			return v.V, true
		},
		InitFrom: func(node.View) []int { return []int{7} },
	},
})

// hist builds a history from "n3 +w x 1", "n3 -w x 1", "n4 +r x", "n4 -r x 1"
// lines: + invokes, - responds (a read's result is its value).
func hist(lines ...string) node.History {
	var h node.History
	for i, l := range lines {
		f := strings.Fields(l)
		id := node.ID(f[0][1] - '0')
		kind := node.Invoked
		if f[1][0] == '-' {
			kind = node.Returned
		}
		var op, res node.Message
		switch f[1][1:] {
		case "w":
			op = write{K: f[2], V: int(f[3][0] - '0')}
		case "r":
			op = read{K: f[2]}
			if kind == node.Returned {
				res = value{V: int(f[3][0] - '0')}
			}
		}
		h.Events = append(h.Events, node.HistoryEvent{Kind: kind, Node: id, Op: op, Result: res, At: time.Unix(int64(i), 0)})
	}
	return h
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		h    node.History
		ok   bool
	}{
		{"read after write", hist("n3 +w x 1", "n3 -w x 1", "n4 +r x", "n4 -r x 1"), true},
		{"stale read", hist("n3 +w x 1", "n3 -w x 1", "n4 +r x", "n4 -r x 0"), false},
		{"concurrent read may see either", hist("n3 +w x 1", "n4 +r x", "n4 -r x 0", "n3 -w x 1"), true},
		{"an open write may have taken effect", hist("n3 +w x 1", "n4 +r x", "n4 -r x 1"), true},
		{"or not", hist("n3 +w x 1", "n4 +r x", "n4 -r x 0"), true},
		{"new then old", hist("n3 +w x 1", "n4 +r x", "n4 -r x 1", "n5 +r x", "n5 -r x 0"), false},
		{"keys are independent", hist("n3 +w x 1", "n3 -w x 1", "n4 +r y", "n4 -r y 0"), true},
	} {
		err := linearizable.Check(c.h, kv)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, linearizable.ErrNotLinearizable)) {
			t.Errorf("%s: %v, want linearizable %v", c.name, err, c.ok)
		}
	}
	if err := linearizable.Check(hist("n3 -w x 1"), kv); !errors.Is(err, node.ErrUnmatchedResponse) {
		t.Errorf("a response to nothing: %v", err)
	}
}

// TestCheckFromASnapshot: a history that begins at a snapshot starts
// from InitFrom's states, and judges no result of an operation invoked
// before it.
func TestCheckFromASnapshot(t *testing.T) {
	h := hist("n4 +r x", "n4 -r x 7")
	h.Start = view{}
	if err := linearizable.Check(h, kv); err != nil {
		t.Errorf("a read of the snapshot's value: %v", err)
	}
	h = hist("n4 +r x", "n4 -r x 0")
	h.Start = view{}
	if err := linearizable.Check(h, kv); err == nil {
		t.Error("a read of a value the snapshot does not hold: linearizable")
	}
	h = hist("n4 -r x 0", "n3 +w x 1", "n3 -w x 1", "n5 +r x", "n5 -r x 1")
	h.Start = view{}
	if err := linearizable.Check(h, kv); err != nil {
		t.Errorf("an early read's result is not judged: %v", err)
	}
	m := linearizable.Register(linearizable.RegisterOps[int]{Write: func(node.Message) (int, bool) { return 0, false }, Read: func(node.Message, node.Message) (int, bool) { return 0, true }})
	if err := linearizable.Check(h, m); err != nil {
		t.Errorf("without InitFrom a history from a snapshot is not judged: %v", err)
	}
}

func TestPropertyAndVisualize(t *testing.T) {
	p := linearizable.Property("KV", kv)
	if p.Kind != node.HistoryKind || p.Check(nil) != nil {
		t.Fatalf("Property: %+v", p)
	}
	h := hist("n3 +w x 1", "n3 -w x 1", "n4 +r x", "n4 -r x 0")
	if err := p.History(h); err == nil || !strings.Contains(err.Error(), `(part "x")`) {
		t.Errorf("the property's verdict: %v", err)
	}
	var b bytes.Buffer
	if err := linearizable.Visualize(&b, h, kv); err != nil || !strings.Contains(b.String(), "<html") {
		t.Errorf("Visualize: %v, %d bytes", err, b.Len())
	}
}

type view struct{}

func (view) Nodes() []node.ID                    { return nil }
func (view) Service(node.ID) node.Service        { return nil }
func (view) TimerScheduled(node.ID, string) bool { return false }
