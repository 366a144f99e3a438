package emulation

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
)

// appendClock appends virtual time d as HH:MM:SS.nnnnnnnnn (hours grow
// past 99 if they must).
func appendClock(b []byte, d time.Duration) []byte {
	if d < 0 {
		b = append(b, '-')
		d = -d
	}
	h := int64(d / time.Hour)
	m := int64(d/time.Minute) % 60
	s := int64(d/time.Second) % 60
	ns := int64(d % time.Second)
	if h < 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, h, 10)
	b = append(b, ':', byte('0'+m/10), byte('0'+m%10), ':', byte('0'+s/10), byte('0'+s%10), '.')
	for div := int64(100000000); div > 0; div /= 10 {
		b = append(b, byte('0'+ns/div%10))
	}
	return b
}

// clock renders virtual time d as the trace does.
func clock(d time.Duration) string { return string(appendClock(nil, d)) }

func appendID(b []byte, id node.ID) []byte {
	if id == node.None {
		return append(b, "none"...)
	}
	return strconv.AppendUint(append(b, 'n'), uint64(id), 10)
}

func msgType(m node.Message) string {
	if m == nil {
		return "<nil>"
	}
	return m.MessageType()
}

// appendDesc appends the trace name of an event; label, when set, replaces
// it (reset, up, down...).
func appendDesc(b []byte, ev node.Event, label string) []byte {
	if label == labelDatagram && ev.Kind == node.EventMessage {
		b = append(b, "datagram "...)
		b = append(b, msgType(ev.Msg)...)
		b = append(b, " from "...)
		return appendID(b, ev.From)
	}
	if label != "" {
		return append(b, label...)
	}
	switch ev.Kind {
	case node.EventMessage:
		b = append(b, "message "...)
		b = append(b, msgType(ev.Msg)...)
		b = append(b, " from "...)
		return appendID(b, ev.From)
	case node.EventTimer:
		return append(append(b, "timer "...), ev.Timer...)
	case node.EventApp:
		return append(append(b, "app "...), msgType(ev.Msg)...)
	case node.EventTransportError:
		return appendID(append(b, "transport-error "...), ev.Peer)
	case node.EventSendRefused:
		b = append(b, "send-refused "...)
		b = append(b, msgType(ev.Msg)...)
		return appendID(append(b, " to "...), ev.Peer)
	}
	return append(b, ev.Kind.String()...)
}

// describe renders an event as the trace names it.
func describe(ev node.Event, label string) string { return string(appendDesc(nil, ev, label)) }

func (e *Emulator) traceHead(id node.ID) []byte {
	b := appendClock(e.tbuf[:0], e.now)
	b = append(b, ' ')
	b = appendID(b, id)
	return append(b, ' ')
}

func (e *Emulator) writeTrace(b []byte) {
	e.tbuf = b
	if _, err := e.cfg.Trace.Write(b); err != nil {
		e.fail(fmt.Errorf("emulation: writing trace: %w", err))
	}
}

// traceStep writes the line of a core step: event, the node's state hash
// after it and how many messages it sent; with Config.TraceCauses, the
// service's sends and the timers it set too.
func (e *Emulator) traceStep(n *emNode, ev node.Event, label string, sends int, sent []layer.Send, timers []node.TimerOp) {
	h, err := n.core.Hash()
	if err != nil {
		e.fail(fmt.Errorf("emulation: hashing the state of %v after %s at %s: %w; rerun with seed=%d", n.id, describe(ev, label), clock(e.now), err, e.cfg.Seed))
		return
	}
	b := appendDesc(e.traceHead(n.id), ev, label)
	b = append(b, " -> hash="...)
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[:8], h.Hi)
	binary.BigEndian.PutUint64(raw[8:], h.Lo)
	b = hex.AppendEncode(b, raw[:])
	b = append(b, " sends="...)
	b = strconv.AppendInt(b, int64(sends), 10)
	if e.cfg.TraceCauses {
		b = appendCauses(b, sent, timers)
	}
	e.writeTrace(append(b, '\n'))
}

// appendCauses appends what a step caused (Config.TraceCauses): its
// service's sends in order (" to=n2:T,n3~T"; a layer's own messages are
// left out, as from the sends count) and the timers it set (" set=a,b").
func appendCauses(b []byte, sent []layer.Send, timers []node.TimerOp) []byte {
	sep := []byte(" to=")
	for i := range sent {
		s := &sent[i]
		if s.Layer {
			continue
		}
		b = appendID(append(b, sep...), s.Env.To)
		if s.Env.Datagram {
			b = append(b, '~')
		} else {
			b = append(b, ':')
		}
		b = append(b, msgType(s.Env.Msg)...)
		sep = []byte{','}
	}
	sep = []byte(" set=")
	for _, t := range timers {
		if !t.Cancel {
			b = append(append(b, sep...), t.Name...)
			sep = []byte{','}
		}
	}
	return b
}

// traceLabel writes a line for an event without a core step.
func (e *Emulator) traceLabel(id node.ID, label string) {
	b := append(e.traceHead(id), label...)
	e.writeTrace(append(b, '\n'))
}

// traceDrop writes the line of a message or application call that was
// dropped on arrival.
func (e *Emulator) traceDrop(id node.ID, what string, msg node.Message, from node.ID, reason string) {
	if e.cfg.Trace == nil {
		return
	}
	b := append(e.traceHead(id), "drop "...)
	b = append(b, what...)
	b = append(b, ' ')
	b = append(b, msgType(msg)...)
	if from != node.None {
		b = appendID(append(b, " from "...), from)
	}
	b = append(b, " ("...)
	b = append(b, reason...)
	e.writeTrace(append(b, ")\n"...))
}
