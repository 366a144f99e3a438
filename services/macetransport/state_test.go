package macetransport

import (
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// sampleState is a node with every field set: an established outgoing
// connection with messages in flight and an incoming one with deliveries.
func sampleState() *State {
	s := newState(AllFixes().withDefaults())
	s.Opened, s.LastConn, s.NextMsg, s.Failures, s.AppPeer = 2, 77, 5, 1, 3
	s.Out = []OutConn{{Peer: 2, ISN: 6001, Conn: 77, Established: true, Base: 6002, Sent: 6004, Retries: 1, Queue: []uint64{4, 5}}}
	s.In = []InConn{{Peer: 3, ISN: 2001, Conn: 12, Next: 2004, Total: 3, Delivered: []uint64{1, 2, 3}}}
	return s
}

func sampleNodeState() node.State {
	return node.State{
		Service: sampleState(),
		Timers:  []node.Timer{{Name: retransmitTimer(2), At: time.Unix(5, 0).UTC()}},
		Rand:    node.NewRand(7, 6),
	}
}

func TestStateString(t *testing.T) {
	want := "out=[n2 6001 conn=77 established base=6002 sent=6004 retries=1 queue=[m4 m5]] in=[n3 2001 conn=12 next=2004 delivered=[m1 m2 m3]] opened=2 failures=1"
	if got := sampleState().String(); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestCloneIsIndependent(t *testing.T) {
	orig := sampleState()
	want := orig.String()
	c := orig.Clone().(*State)
	if c.String() != want || c.opts != orig.opts || c.AppPeer != orig.AppPeer || c.LastConn != orig.LastConn {
		t.Fatalf("clone differs: %v", c)
	}
	c.Out[0].Queue[0] = 99
	c.Out[0].Queue = append(c.Out[0].Queue, 100)
	c.Out[0].Retries = 7
	c.In[0].Delivered[0] = 98
	c.In = append(c.In, InConn{Peer: 4})
	if got := orig.String(); got != want {
		t.Fatalf("original changed by mutating its clone:\n got %s\nwant %s", got, want)
	}
	empty := newState(DefaultOptions()).Clone().(*State)
	if empty.Out != nil || empty.In != nil {
		t.Fatalf("clone of an empty state must keep nil lists: %#v", empty)
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	spec, err := NewSpec(AllFixes())
	if err != nil {
		t.Fatal(err)
	}
	st := sampleNodeState()
	back, _ := servicetest.CheckpointRoundTrip(t, spec, st)
	bs := back.Service.(*State)
	if got, want := bs.String(), st.Service.(*State).String(); got != want || bs.AppPeer != 3 || bs.LastConn != 77 || bs.NextMsg != 5 {
		t.Fatalf("decoded %s, want %s", got, want)
	}
	// The configuration is not state: it comes from the factory.
	if bs.opts != AllFixes().withDefaults() {
		t.Fatalf("decoded state lost the factory's options: %v", bs.opts)
	}
}

func TestOptions(t *testing.T) {
	var o Options
	for _, name := range FixNames() {
		if err := o.EnableFix("fix-" + name); err != nil {
			t.Fatal(err)
		}
	}
	if o != (Options{}).Fixed() {
		t.Fatalf("every fix by name: %+v, want %+v", o, Options{}.Fixed())
	}
	if err := o.EnableFix("nonsense"); err == nil || !strings.HasPrefix(err.Error(), "macetransport: unknown fix") {
		t.Fatalf("unknown fix: %v", err)
	}
	if got, want := AllFixes().String(), "rto=1s max-retries=4 app-interval=0s delivered-log=16 fixes=[monotone-syn]"; got != want {
		t.Fatalf("String: %s, want %s", got, want)
	}
	if (Options{}).withDefaults() != DefaultOptions() {
		t.Fatalf("zero options are not the defaults: %+v", Options{}.withDefaults())
	}
	for _, bad := range []Options{{RetransmitTimeout: -1}, {MaxRetries: -1}, {AppInterval: -1}, {DeliveredLog: -1}} {
		if _, err := NewSpec(bad); err == nil || !strings.HasPrefix(err.Error(), "macetransport: ") {
			t.Errorf("NewSpec(%+v): %v, want a macetransport error", bad, err)
		}
	}
}

func TestNeighbors(t *testing.T) {
	s := sampleState()
	s.In = append(s.In, InConn{Peer: 5})
	s.Out = append([]OutConn{{Peer: 1}}, s.Out...)
	if got := s.Neighbors(1); len(got) != 3 || got[0] != 2 || got[1] != 3 || got[2] != 5 {
		t.Fatalf("neighbours of n1: %v, want [n2 n3 n5] (without self)", got)
	}
	if got := newState(DefaultOptions()).Neighbors(1); len(got) != 0 {
		t.Fatalf("a node without connections has neighbours %v", got)
	}
}

// TestEncodeMsgpackMatchesReflection holds the hand-written encoder to the
// layout reflection derives from State's fields and tags, which is what the
// decoder reads: a field added to State, OutConn or InConn without
// EncodeMsgpack fails here.
func TestEncodeMsgpackMatchesReflection(t *testing.T) {
	type plainState State // same fields and tags, no EncodeMsgpack
	big := benchState(16).Service.(*State)
	big.Out[3].Retries, big.Out[4].Queue, big.In[2].Delivered = 1<<40, nil, []uint64{}
	for _, s := range []*State{newState(DefaultOptions()), sampleState(), big} {
		servicetest.EncodingMatchesReflection(t, s, (*plainState)(s))
	}
}
