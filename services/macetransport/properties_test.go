package macetransport

import (
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// mapView is a node.View over hand-built states.
type mapView map[node.ID]*State

// allIDs are the IDs a mapView may hold, ascending.
var allIDs = []node.ID{1, 2, 3}

func (v mapView) Nodes() []node.ID {
	if len(v) == len(allIDs) {
		return allIDs
	}
	if _, ok := v[1]; !ok {
		return allIDs[1 : 1+len(v)] // the partial views drop n1
	}
	return allIDs[:len(v)]
}

func (v mapView) Service(id node.ID) node.Service {
	if s, ok := v[id]; ok {
		return s
	}
	return nil
}

func (mapView) TimerScheduled(node.ID, string) bool { return false }

// healthy is n1 having sent m1..m3 to n2, all acknowledged and delivered.
func healthy() mapView {
	s1 := newState(DefaultOptions())
	s1.Opened, s1.NextMsg = 1, 3
	s1.Out = []OutConn{{Peer: 2, ISN: 2001, Established: true, Base: 2004, Sent: 2004}}
	s2 := newState(DefaultOptions())
	s2.In = []InConn{{Peer: 1, ISN: 2001, Next: 2004, Total: 3, Delivered: []uint64{1, 2, 3}}}
	return mapView{1: s1, 2: s2}
}

func TestPropertiesHoldOnHealthyTransfer(t *testing.T) {
	v := healthy()
	for _, p := range Properties() {
		if err := p.Check(v); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		p := p
		if allocs := testing.AllocsPerRun(100, func() { _ = p.Check(v) }); allocs != 0 {
			t.Errorf("%s allocates %v times when it holds", p.Name, allocs)
		}
	}
}

func TestPropertiesCatchViolations(t *testing.T) {
	for _, tc := range []struct {
		prop   string
		mutate func(v mapView)
		want   string
	}{
		{InOrderDelivery, func(v mapView) { v[2].In[0].Delivered = []uint64{1, 3, 2} },
			"n2: from n1 (conn 2001): m3 after m1; n2: from n1 (conn 2001): m2 after m3"},
		{NoDuplicateDelivery, func(v mapView) { v[2].In[0].Delivered = []uint64{1, 2, 2} },
			"n2: from n1 (conn 2001): m2 delivered twice"},
		{DeliveredWasSent, func(v mapView) { v[1].Out[0].Sent, v[1].Out[0].Base = 2003, 2003 },
			"n2: from n1 (conn 2001): accepted up to 2003 but n1 sent up to 2002"},
		{AllAcked, func(v mapView) {
			v[1].Out[0].Base, v[1].Out[0].Queue = 2003, []uint64{3}
		}, "n1: to n2 (conn 2001): [m3] unacknowledged"},
	} {
		v := healthy()
		tc.mutate(v)
		err := servicetest.Property(t, Properties(), tc.prop).Check(v)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %s", tc.prop, err, tc.want)
		}
		// Every other property still holds: each judges one thing.
		for _, p := range Properties() {
			if p.Name != tc.prop && (p.Name != InOrderDelivery || tc.prop != NoDuplicateDelivery) {
				if err := p.Check(v); err != nil {
					t.Errorf("%s broken, but %s fails too: %v", tc.prop, p.Name, err)
				}
			}
		}
	}
}

// TestPropertiesOnPartialViews: a view holding only the receiver judges
// what it holds (order, duplicates) and leaves DeliveredWasSent, which
// needs the sender, alone.
func TestPropertiesOnPartialViews(t *testing.T) {
	v := healthy()
	v[2].In[0].Delivered = []uint64{7, 8}
	// A sender that holds another connection (it reset, or failed over to
	// a new one) is no ground for comparison.
	v[1].Out[0].ISN, v[1].Out[0].Sent = 6001, 6001
	if err := servicetest.Property(t, Properties(), DeliveredWasSent).Check(v); err != nil {
		t.Errorf("DeliveredWasSent compared different connections: %v", err)
	}
	delete(v, 1)
	if err := servicetest.Property(t, Properties(), DeliveredWasSent).Check(v); err != nil {
		t.Errorf("DeliveredWasSent judged without the sender: %v", err)
	}
	v[2].In[0].Delivered = []uint64{8, 7}
	if err := servicetest.Property(t, Properties(), InOrderDelivery).Check(v); err == nil {
		t.Error("InOrderDelivery missed a reordering on a partial view")
	}
}

// TestBadInputIsIgnored: calls and packets a hostile or mistaken peer may
// send change nothing and panic nowhere.
func TestBadInputIsIgnored(t *testing.T) {
	h, err := nodetest.New(harnessConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ line, want string }{
		{"start n1 n2", "ok\n"},
		{"app n1 send n1 2", "ok\n"},    // to itself
		{"app n1 send n2 0", "ok\n"},    // nothing to send
		{"app n1 send n2 -3", "ok\n"},   // negative
		{"app n1 send n2 1001", "ok\n"}, // past MaxSendCount
		{"fire n1 rtx-n2", "n1: timer rtx-n2 not scheduled\n"},
		{"state", "n1: out=[] in=[] opened=0 failures=0 timers=[]\nn2: out=[] in=[] opened=0 failures=0 timers=[]\n"},
	} {
		got, err := h.Exec(tc.line)
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.line, got, err, tc.want)
		}
	}
	// Packets out of nowhere: data without a connection, an ACK of a
	// connection the node never opened or of a packet it never sent, a
	// call naming no node, a transport error (there are no connections
	// to break: datagrams only).
	var out strings.Builder
	for _, ev := range []node.Event{
		{Kind: node.EventMessage, From: 2, Msg: Data{Seq: 9, Msg: 1}},
		{Kind: node.EventMessage, From: 2, Msg: Ack{ISN: 2001, Seq: 5000}},
		{Kind: node.EventApp, Msg: SendMessages{To: node.None, Count: 1}},
		{Kind: node.EventTransportError, Peer: 2},
	} {
		if err := h.Step(1, ev, &out); err != nil {
			t.Fatalf("%v: %v", ev, err)
		}
	}
	if out.String() != "n1: transport error from n2\n" {
		t.Errorf("bad input made n1 act: %q", out.String())
	}
	if _, err := h.Exec("app n1 send n2 1"); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := h.Step(1, node.Event{Kind: node.EventMessage, From: 2, Msg: Ack{ISN: 2001, Seq: 2005}}, &out); err != nil || out.String() != "" {
		t.Errorf("ACK of a packet never sent: %q, %v", out.String(), err)
	}
	if s := h.Service(1).(*State); s.Pending() != 1 || s.Out[0].Established {
		t.Errorf("ACK of a packet never sent changed the connection: %v", s)
	}
}
