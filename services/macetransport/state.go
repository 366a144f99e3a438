package macetransport

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Timer names. A node has one retransmission timer per peer it has an
// outgoing connection to, named TimerRetransmitPrefix + the peer ("rtx-n2").
const (
	// TimerRetransmitPrefix prefixes the retransmission timer of the
	// outgoing connection to a peer.
	TimerRetransmitPrefix = "rtx-"
	// TimerApp is the test application's periodic send (Options.AppInterval).
	TimerApp = "app"
)

// ISN spacing: a node's k-th connection (k = 0, 1, ...) starts at sequence
// number FirstISN + k·ISNSpacing, the numbers of MaceMC's Figure 4 (2001,
// then 6001).
const (
	FirstISN   = 2001
	ISNSpacing = 4000
)

// State is the service state of one MaceTransport node, sender and
// receiver at once; it implements node.Service, node.Cloner and
// node.Neighborer. Its exported fields are the node state that is
// checkpointed and hashed; the configuration is unexported and comes from
// the factory (NewSpec).
//
// Callers other than the runtimes (properties, the CLI) must treat a State
// they did not create as read-only.
type State struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`

	// Init does nothing: a node starts with no connection, and the
	// application's calls (SendMessages) open them. HandleTransportError does
	// nothing: the transport sends datagrams only, which never cause one.
	node.NopHandlers

	// Opened counts the outgoing connections the node has opened; the next
	// one gets ISN FirstISN + Opened·ISNSpacing.
	Opened uint64
	// LastConn is the last connection identifier issued
	// (Options.FixMonotoneSYN; zero without it).
	LastConn uint64
	// NextMsg is the identifier of the application's last message (the
	// first is 1), so it counts the messages the application sent.
	NextMsg uint64
	// Failures counts the connections closed after Options.MaxRetries
	// timeouts (each an error the application got and resent after).
	Failures uint64
	// AppPeer is where the periodic application send goes
	// (Options.AppInterval); None when off.
	AppPeer node.ID
	// Out holds the outgoing connections, one per peer, ascending by peer.
	Out []OutConn
	// In holds the incoming connections, one per peer, ascending by peer.
	In []InConn

	opts Options
}

// OutConn is the sending end of a connection to Peer.
type OutConn struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Peer is the receiver.
	Peer node.ID
	// ISN is the connection's initial sequence number: its SYN's.
	ISN uint64
	// Conn is the connection identifier its SYN carries (zero without
	// Options.FixMonotoneSYN).
	Conn uint64
	// Established is set once an ACK of the SYN came back; until then only
	// the SYN packet is sent (there is no handshake: the SYN carries data).
	Established bool
	// Base is the sequence number of Queue[0], the oldest unacknowledged
	// message (the next one to be sent when Queue is empty).
	Base uint64
	// Sent is the next sequence number never transmitted:
	// Base <= Sent <= Base+len(Queue).
	Sent uint64
	// Retries counts the consecutive retransmission timeouts without any
	// ACK from the peer.
	Retries int
	// Queue holds the application messages not yet acknowledged, in order:
	// Queue[i] travels with sequence number Base+i.
	Queue []uint64
}

// InConn is the receiving end of the connection from Peer.
type InConn struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Peer is the sender.
	Peer node.ID
	// ISN is the connection's initial sequence number.
	ISN uint64
	// Conn is the connection identifier its SYN carried (zero without
	// Options.FixMonotoneSYN).
	Conn uint64
	// Next is the sequence number expected next; everything below it
	// (down to ISN) was accepted in order.
	Next uint64
	// Total counts the messages delivered to the application on this
	// connection.
	Total uint64
	// Delivered holds the last Options.DeliveredLog messages delivered to
	// the application on this connection, in delivery order.
	Delivered []uint64
}

var (
	_ node.Service    = (*State)(nil)
	_ node.Cloner     = (*State)(nil)
	_ node.Neighborer = (*State)(nil)
)

// newState returns a node with no connection and the given configuration.
func newState(opts Options) *State { return &State{opts: opts} }

// Options returns the configuration the node runs with.
func (s *State) Options() Options { return s.opts }

// Clone implements node.Cloner: a deep copy sharing no memory with s.
func (s *State) Clone() node.Service {
	c := *s
	if s.Out != nil {
		c.Out = make([]OutConn, len(s.Out))
		for i, o := range s.Out {
			o.Queue = slices.Clone(o.Queue)
			c.Out[i] = o
		}
	}
	if s.In != nil {
		c.In = make([]InConn, len(s.In))
		for i, in := range s.In {
			in.Delivered = slices.Clone(in.Delivered)
			c.In[i] = in
		}
	}
	return &c
}

// Neighbors implements node.Neighborer: the peers the node has a
// connection with, either way, ascending.
func (s *State) Neighbors(self node.ID) []node.ID {
	out := make([]node.ID, 0, len(s.Out)+len(s.In))
	for _, o := range s.Out {
		out = append(out, o.Peer)
	}
	for _, in := range s.In {
		out = append(out, in.Peer)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return slices.DeleteFunc(out, func(id node.ID) bool { return id == self || id == node.None })
}

// Pending returns how many application messages wait for an
// acknowledgment, over every outgoing connection.
func (s *State) Pending() int {
	n := 0
	for _, o := range s.Out {
		n += len(o.Queue)
	}
	return n
}

// outIndex returns the index of the outgoing connection to peer, or -1.
func (s *State) outIndex(peer node.ID) int {
	i, ok := slices.BinarySearchFunc(s.Out, peer, func(o OutConn, p node.ID) int { return cmpID(o.Peer, p) })
	if !ok {
		return -1
	}
	return i
}

// inIndex returns the index of the incoming connection from peer, or -1.
func (s *State) inIndex(peer node.ID) int {
	i, ok := slices.BinarySearchFunc(s.In, peer, func(c InConn, p node.ID) int { return cmpID(c.Peer, p) })
	if !ok {
		return -1
	}
	return i
}

func cmpID(a, b node.ID) int { return cmp.Compare(a, b) }

// String renders the state for scripts and traces, e.g. "out=[n2 6001
// established base=6002 sent=6003 retries=0 queue=[m2]] in=[] opened=2
// failures=1".
func (s *State) String() string {
	var b strings.Builder
	b.WriteString("out=[")
	for i, o := range s.Out {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(o.String())
	}
	b.WriteString("] in=[")
	for i, in := range s.In {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(in.String())
	}
	fmt.Fprintf(&b, "] opened=%d failures=%d", s.Opened, s.Failures)
	return b.String()
}

// String renders the connection: "n2 6001 established base=6002 sent=6003
// retries=0 queue=[m2]", with conn=ID when it has an identifier.
func (o OutConn) String() string {
	state := "syn-sent"
	if o.Established {
		state = "established"
	}
	conn := ""
	if o.Conn != 0 {
		conn = fmt.Sprintf(" conn=%d", o.Conn)
	}
	return fmt.Sprintf("%v %d%s %s base=%d sent=%d retries=%d queue=%s",
		o.Peer, o.ISN, conn, state, o.Base, o.Sent, o.Retries, formatMsgs(o.Queue))
}

// String renders the connection: "n1 2001 next=2002 delivered=[m1]", with
// conn=ID when it has an identifier.
func (c InConn) String() string {
	conn := ""
	if c.Conn != 0 {
		conn = fmt.Sprintf(" conn=%d", c.Conn)
	}
	return fmt.Sprintf("%v %d%s next=%d delivered=%s", c.Peer, c.ISN, conn, c.Next, formatMsgs(c.Delivered))
}

// formatMsgs renders message identifiers as "[m1 m2]".
func formatMsgs(ms []uint64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "m%d", m)
	}
	b.WriteByte(']')
	return b.String()
}
