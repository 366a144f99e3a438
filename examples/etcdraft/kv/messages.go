package kv

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Put is the application call that writes Value under Key through the
// replicated log. It is a client operation (node.Invoke when the call
// arrives, node.Respond with no result once the node applied it).
type Put struct {
	Key, Value string
}

// Get is the application call that reads Key: through the replicated
// log, answered when the node applies it, or from the node's applied
// state at once with Options.LocalReads. It is a client operation, its
// result a Value.
type Get struct {
	Key string
}

// Value is a Get's result: the value under the key ("" for a key never
// written).
type Value struct {
	Value string
}

// Raft carries one raftpb.Message between nodes, protobuf-encoded.
type Raft struct {
	Msg []byte
}

func (Put) MessageType() string   { return "etcdkv.Put" }
func (Get) MessageType() string   { return "etcdkv.Get" }
func (Value) MessageType() string { return "etcdkv.Value" }
func (Raft) MessageType() string  { return "etcdkv.Raft" }

// String renders the raft message for traces.
func (r Raft) String() string {
	var m raftpb.Message
	if err := proto.Unmarshal(r.Msg, &m); err != nil {
		return fmt.Sprintf("raft(%d bytes, undecodable)", len(r.Msg))
	}
	s := fmt.Sprintf("%v %d->%d term=%d", m.GetType(), m.GetFrom(), m.GetTo(), m.GetTerm())
	switch m.GetType() {
	case raftpb.MessageType_MsgApp:
		s += fmt.Sprintf(" index=%d logTerm=%d entries=%d commit=%d", m.GetIndex(), m.GetLogTerm(), len(m.GetEntries()), m.GetCommit())
	case raftpb.MessageType_MsgAppResp:
		s += fmt.Sprintf(" index=%d reject=%v", m.GetIndex(), m.GetReject())
	case raftpb.MessageType_MsgVoteResp, raftpb.MessageType_MsgPreVoteResp:
		s += fmt.Sprintf(" reject=%v", m.GetReject())
	case raftpb.MessageType_MsgHeartbeat:
		s += fmt.Sprintf(" commit=%d", m.GetCommit())
	}
	return s
}

// Messages are the store's messages, calls and results (Spec.Messages).
func Messages() []node.Message { return []node.Message{Put{}, Get{}, Value{}, Raft{}} }

// marshalDeterministic encodes a protobuf message the same way every time
// (raftpb has no maps, but say so).
var marshalDeterministic = proto.MarshalOptions{Deterministic: true}
