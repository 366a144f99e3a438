package livetest

import (
	"bytes"
	"fmt"
	"net"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/memberlist"
)

// aliveMsgType is memberlist's message type of an alive message (v0.7.0's
// aliveMsg: the fifth of its message types).
const aliveMsgType = 4

// aliveWire is memberlist's alive message as it travels (its unexported
// alive type: a msgpack map of these fields).
type aliveWire struct {
	Incarnation uint32
	Node        string
	Addr        []byte
	Port        uint16
	Meta        []byte
	Vsn         []uint8
}

// AliveGossip returns one UDP packet of memberlist's gossip (v0.7.0,
// unencrypted, with the cluster label's header when label is not empty)
// announcing that member name is alive at ip:port with metadata meta and
// sane protocol versions: what anyone who reaches a node's gossip port
// can send without a gossip key. Tests and the soak use it to flood a
// node with well-formed fake members.
func AliveGossip(label, name string, ip net.IP, port uint16, meta []byte, incarnation uint32) ([]byte, error) {
	if v4 := ip.To4(); v4 != nil {
		ip = v4
	}
	var buf bytes.Buffer
	buf.WriteByte(aliveMsgType)
	msg := aliveWire{Incarnation: incarnation, Node: name, Addr: ip, Port: port, Meta: meta,
		Vsn: []uint8{memberlist.ProtocolVersionMin, memberlist.ProtocolVersionMax, memberlist.ProtocolVersion2Compatible, 0, 0, 0}}
	if err := codec.NewEncoder(&buf, &codec.MsgpackHandle{}).Encode(&msg); err != nil {
		return nil, fmt.Errorf("livetest: encode alive: %w", err)
	}
	return memberlist.AddLabelHeaderToPacket(buf.Bytes(), label)
}
