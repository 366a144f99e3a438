package kv

import (
	"maps"
	"reflect"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// entries returns the log entries carrying ps, from index 2 in term 2.
func entries(ps ...Proposal) []*raftpb.Entry {
	out := make([]*raftpb.Entry, len(ps))
	for i, p := range ps {
		out[i] = &raftpb.Entry{Index: proto.Uint64(uint64(2 + i)), Term: proto.Uint64(2), Type: raftpb.EntryNormal.Enum(), Data: p.encode()}
	}
	return out
}

// TestApplyOnceAndInOrder: a proposal committed twice (a retry whose
// original made it too, here after the node's next write) applies once,
// so the write after it stands; a read returns the value at its place in
// the log; the node's own operations complete in order, each once, and
// another node's change only the map.
func TestApplyOnceAndInOrder(t *testing.T) {
	w1 := Proposal{Node: 1, Seq: 1, Key: "k", Value: "a"}
	w2 := Proposal{Node: 1, Seq: 2, Key: "k", Value: "b"}
	r3 := Proposal{Node: 1, Seq: 3, Key: "k", Read: true}
	other := Proposal{Node: 2, Seq: 1, Key: "k", Value: "c"}
	a := newApp()
	a.Seq, a.Pending = 3, []Proposal{w1, w2, r3}
	done := a.apply(1, entries(w1, w2, w1, r3, other, other))
	want := []completed{{op: Put{Key: "k", Value: "a"}}, {op: Put{Key: "k", Value: "b"}}, {op: Get{Key: "k"}, result: Value{Value: "b"}}}
	if !reflect.DeepEqual(done, want) {
		t.Errorf("completed %+v, want %+v", done, want)
	}
	if !maps.Equal(a.KV, map[string]string{"k": "c"}) || len(a.Pending) != 0 || !maps.Equal(a.Last, map[uint64]uint64{1: 3, 2: 1}) {
		t.Errorf("after the log: map %v, pending %v, last %v; want k=c, none, {1:3 2:1}", a.KV, a.Pending, a.Last)
	}
	if len(a.Applied) != 6 {
		t.Errorf("applied %v, want every entry's index", a.Applied)
	}
}
