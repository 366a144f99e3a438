package bullet

import (
	"fmt"
	"slices"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Timer names.
const (
	// TimerDiscover asks the source for a fresh sample of members.
	TimerDiscover = "discover"
	// TimerPeer replaces a useless sender, asks a new peer to become a
	// sender and issues block requests.
	TimerPeer = "peer"
	// TimerDiff sends every receiver the diff of the node's file map.
	TimerDiff = "diff"
	// TimerPush pushes the source's next block.
	TimerPush = "push"
)

// SenderLink is a receiver's record of one of its senders.
type SenderLink struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// ID is the sender.
	ID node.ID
	// Accepted is set once the sender answered PeerAccept; before, the
	// node waits for its answer and ignores its diffs.
	Accepted bool
	// View is the receiver's view of the sender's file map: the blocks
	// the sender's diffs announced.
	View []uint64
	// Received counts the diffs received from the sender since it
	// accepted.
	Received uint32
	// Asked are the blocks requested from the sender and not yet
	// received, in request order.
	Asked []uint32
}

// ReceiverLink is a sender's record of one of its receivers.
type ReceiverLink struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// ID is the receiver.
	ID node.ID
	// Shadow is the shadow file map: the blocks the node has and has not
	// announced to the receiver yet.
	Shadow []uint64
	// Told is what the transport accepted of the diffs to the receiver:
	// the blocks of every diff sent and not refused since the receiver was
	// accepted (a ghost of the receiver's view, so that the safety
	// property can be judged on the sender alone, see
	// FileMapViewConsistent). Told and Shadow are disjoint.
	Told []uint64
	// Sent counts the diffs the transport accepted for the receiver since
	// the node accepted it (a refused diff is not counted).
	Sent uint32
}

// State is the service state of one Bullet′ node; it implements
// node.Service, node.SendRefusedHandler and node.Cloner. Its exported
// fields are the node state that is checkpointed and hashed; ID sets and
// links are ascending by ID, file maps are bitmaps of Options.Blocks bits
// (nil before the download starts). The configuration is unexported and
// comes from the factory (NewSpec).
//
// Callers other than the runtimes (properties, the CLI) must treat a State
// they did not create as read-only.
type State struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`

	// Init does nothing: a node waits for the application to start its
	// download (Download); in Mace joining is an application call.
	node.NopHandlers

	// Source is the node that has the file; None until the download
	// starts.
	Source node.ID
	// Started is when the download started (Env.Now in Unix nanoseconds),
	// Completed when the node got its last block; zero until then.
	Started, Completed int64
	// Have is the node's file map: the blocks it has.
	Have []uint64
	// Known are the peers the discovery told the node of (the source
	// among them), never the node itself.
	Known []node.ID
	// Members are the nodes that joined (the source only).
	Members []node.ID
	// PushTargets are the first Options.PushFanout members, to which the
	// source pushes the file (the source only).
	PushTargets []node.ID
	// NextPush is the next block the source pushes.
	NextPush uint32
	// Senders are the peers the node downloads from (or asked to).
	Senders []SenderLink
	// Receivers are the peers the node serves.
	Receivers []ReceiverLink

	opts    Options
	payload []byte // the shared, immutable content of every block
}

var (
	_ node.Service            = (*State)(nil)
	_ node.SendRefusedHandler = (*State)(nil)
	_ node.Cloner             = (*State)(nil)
	_ node.Neighborer         = (*State)(nil)
)

// newState returns a node that has not started, with its configuration.
func newState(opts Options, payload []byte) *State { return &State{opts: opts, payload: payload} }

// Options returns the configuration the node runs with.
func (s *State) Options() Options { return s.opts }

// started reports whether the node started its download (or serves it).
func (s *State) started() bool { return s.Source != node.None }

// Blocks returns the number of blocks the node has.
func (s *State) Blocks() int { return count(s.Have) }

// Complete reports whether the node has every block.
func (s *State) Complete() bool { return s.started() && count(s.Have) == s.opts.Blocks }

// Clone implements node.Cloner: a deep copy sharing no mutable memory with
// s (the block payload is immutable and shared). The explorer clones a
// state per transition, so every file map of the copy is a window of one
// backing array, capped at its length (a map never grows).
func (s *State) Clone() node.Service {
	c := *s
	n := len(s.Have)
	for _, l := range s.Senders {
		n += len(l.View)
	}
	for _, l := range s.Receivers {
		n += len(l.Shadow) + len(l.Told)
	}
	buf := make([]uint64, 0, n)
	c.Have, buf = carve(buf, s.Have)
	c.Known = slices.Clone(s.Known)
	c.Members = slices.Clone(s.Members)
	c.PushTargets = slices.Clone(s.PushTargets)
	if s.Senders != nil {
		c.Senders = make([]SenderLink, len(s.Senders))
		for i, l := range s.Senders {
			l.View, buf = carve(buf, l.View)
			l.Asked = slices.Clone(l.Asked)
			c.Senders[i] = l
		}
	}
	if s.Receivers != nil {
		c.Receivers = make([]ReceiverLink, len(s.Receivers))
		for i, l := range s.Receivers {
			l.Shadow, buf = carve(buf, l.Shadow)
			l.Told, buf = carve(buf, l.Told)
			c.Receivers[i] = l
		}
	}
	return &c
}

// carve appends src to buf and returns the appended window, capped at its
// length (nil for a nil src), and the grown buf.
func carve(buf, src []uint64) (window, rest []uint64) {
	if src == nil {
		return nil, buf
	}
	start := len(buf)
	buf = append(buf, src...)
	return buf[start:len(buf):len(buf)], buf
}

// Neighbors implements node.Neighborer: the node's senders and receivers,
// ascending, without self — the peers whose file maps and views the
// safety property compares with this node's.
func (s *State) Neighbors(self node.ID) []node.ID {
	var out []node.ID
	add := func(id node.ID) {
		if id == self {
			return
		}
		if i, ok := slices.BinarySearch(out, id); !ok {
			out = slices.Insert(out, i, id)
		}
	}
	for _, l := range s.Senders {
		add(l.ID)
	}
	for _, l := range s.Receivers {
		add(l.ID)
	}
	return out
}

// String renders the state on one line for traces and the CLI, e.g.
// "source=n1 have=[0-7] known=[n1 n3] senders=[n1:[0-7]#1 asked=[3]]
// receivers=[n3:shadow=[] told=[0-7]#2]".
func (s *State) String() string {
	if !s.started() {
		return "idle"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "source=%v have=%s known=%s", s.Source, formatBlocks(blocksOf(s.Have)), formatIDs(s.Known))
	if len(s.Members) > 0 {
		fmt.Fprintf(&b, " members=%s push=%s next-push=%d", formatIDs(s.Members), formatIDs(s.PushTargets), s.NextPush)
	}
	b.WriteString(" senders=[")
	for i, l := range s.Senders {
		if i > 0 {
			b.WriteByte(' ')
		}
		if !l.Accepted {
			fmt.Fprintf(&b, "%v:pending", l.ID)
			continue
		}
		fmt.Fprintf(&b, "%v:%s#%d", l.ID, formatBlocks(blocksOf(l.View)), l.Received)
		if len(l.Asked) > 0 {
			fmt.Fprintf(&b, " asked=%v", l.Asked)
		}
	}
	b.WriteString("] receivers=[")
	for i, l := range s.Receivers {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%v:shadow=%s told=%s#%d", l.ID, formatBlocks(blocksOf(l.Shadow)), formatBlocks(blocksOf(l.Told)), l.Sent)
	}
	b.WriteByte(']')
	if s.Completed != 0 {
		b.WriteString(" complete")
	}
	return b.String()
}

// HandleApp implements node.Service: Download starts the download, or
// makes the node the source. Other calls are ignored.
func (s *State) HandleApp(env node.Env, call node.Message) {
	c, ok := call.(Download)
	if !ok || s.started() || c.Source == node.None {
		return
	}
	self := env.Self()
	s.Source = c.Source
	s.Started = env.Now().UnixNano()
	if c.Source == self {
		s.Have = fullMap(s.opts.Blocks)
		s.Completed = s.Started
	} else {
		s.Have = newMap(s.opts.Blocks)
		s.Known = []node.ID{c.Source}
		env.Send(c.Source, Join{})
		env.SetTimer(TimerDiscover, s.opts.DiscoverInterval)
		env.SetTimer(TimerPeer, s.opts.PeerInterval)
	}
	env.SetTimer(TimerDiff, s.opts.DiffInterval)
}

// HandleMessage implements node.Service. A node that has not started
// ignores every message.
func (s *State) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	if !s.started() || from == env.Self() {
		return
	}
	switch m := msg.(type) {
	case Join:
		s.handleJoin(env, from)
	case Sample:
		s.handleSample(env, from, m)
	case PeerRequest:
		s.handlePeerRequest(env, from)
	case PeerAccept:
		s.handlePeerAccept(env, from)
	case PeerReject:
		s.dropSender(from)
	case Unpeer:
		s.dropReceiver(from)
	case Disown:
		s.dropSender(from)
	case Diff:
		s.handleDiff(env, from, m)
	case Request:
		s.handleRequest(env, from, m)
	case Block:
		s.handleBlock(env, from, m)
	}
}

// HandleTimer implements node.Service.
func (s *State) HandleTimer(env node.Env, name string) {
	if !s.started() {
		return
	}
	switch name {
	case TimerDiscover:
		env.Send(s.Source, Join{})
		env.SetTimer(TimerDiscover, s.opts.DiscoverInterval)
	case TimerPeer:
		s.peer(env)
		env.SetTimer(TimerPeer, s.opts.PeerInterval)
	case TimerDiff:
		s.sendDiffs(env)
		env.SetTimer(TimerDiff, s.opts.DiffInterval)
	case TimerPush:
		s.push(env)
	}
}

// HandleTransportError implements node.Service: the connection to peer
// broke, and with it whatever was in flight, so both links with it go
// (the peering timer finds new senders).
func (s *State) HandleTransportError(env node.Env, peer node.ID) {
	s.dropSender(peer)
	s.dropReceiver(peer)
}

// HandleSendRefused implements node.SendRefusedHandler: the transport
// refused a Diff (see refuseDiff, the paper's bug) or a pushed Block (the
// source pushes it again on its next push timer).
func (s *State) HandleSendRefused(env node.Env, to node.ID, msg node.Message) {
	switch m := msg.(type) {
	case Diff:
		s.refuseDiff(env, to, m)
	case Block:
		if m.Index < s.NextPush {
			s.NextPush = m.Index
		}
		if !env.TimerScheduled(TimerPush) {
			env.SetTimer(TimerPush, s.opts.PushInterval)
		}
	}
}

// insertID adds id to the ascending set ids.
func insertID(ids []node.ID, id node.ID) []node.ID {
	i, ok := slices.BinarySearch(ids, id)
	if ok {
		return ids
	}
	return slices.Insert(ids, i, id)
}
