package node

import (
	"errors"
	"fmt"
)

// Durable is an optional method of a Service whose state lives partly on
// stable storage: the part a real node writes to disk before acting on it
// and finds again after a crash (Paxos acceptors keep their promise and
// accepted value this way). Without it, a reset loses the whole service
// state.
//
// On EventReset the core builds the fresh value from the factory and, before
// Init, calls fresh.Recover(previous) with the service value the node had
// when it went down, so the fresh value can copy the fields it keeps on
// disk. Recover must copy, not alias, mutable memory (slices, maps,
// pointers) of previous: previous still belongs to whoever held the state
// before the reset (a shell may keep it, as a checkpoint or as the node
// state of another global state), and the new incarnation must not write
// into it. It must be deterministic, like a handler, and it has no Env:
// it restores state, and any action on the world belongs in Init, which
// runs right after it. EventInit (a first start) has no previous value and
// does not call it.
//
// The durable part needs no method of its own: it is what Recover keeps.
// A node's durable projection is fresh.Recover(current) for a fresh value
// built by the factory, encoded canonically (Core.AppendDurable). That is
// what the live runtime writes to its store (a Pipeline with
// PipelineConfig.Persist emits it as a DurableWrite under
// ServiceDurableKey whenever its bytes change) and syncs before the step's
// messages leave the node, and what it decodes at a restart into the
// previous value of Core.Restart: fresh.Recover(decoded) then Init,
// exactly as a reset in the emulator and the explorer (which keep the
// previous value in memory). Recover therefore must not depend on fields
// it does not keep: after a restart it sees only those.
type Durable interface {
	Recover(previous Service)
}

// ServiceDurableKey is the key of the service's durable projection among a
// step's DurableWrites and in a node's store. No layer.Durable may use it.
const ServiceDurableKey = "service"

// DurableWrite is a record a Pipeline call asks the shell to make durable
// — written and synced — before it carries out that call's sends
// (etcd raft's Ready.HardState discipline: a promise is on disk before the
// reply that states it leaves the node). Key is ServiceDurableKey for the
// service's durable projection, else a layer.Durable's DurableKey; Data
// replaces the record's previous value. Data is the Pipeline's to keep: a
// shell may hold it without copying, and must not modify it.
type DurableWrite struct {
	Key  string
	Data []byte
}

// Recovered is what a live node found in its store at a restart: the
// records the Pipeline last emitted (Pipeline.Restart). A nil Service
// means none (the node never persisted its service, or it is not
// Durable); Layers maps DurableKeys to records.
type Recovered struct {
	Service []byte
	Layers  map[string][]byte
}

// ErrBadDurable is wrapped by the errors of decoding a durable record
// (Core.DecodeDurable, Pipeline.Restart): the store holds bytes this
// service cannot read back, and a node that started empty instead could
// break what it promised before the crash.
var ErrBadDurable = errors.New("node: bad durable record")

// IsDurable reports whether the node's service keeps a durable part (its
// value implements Durable). It asks the factory once and remembers.
func (c *Core) IsDurable() bool {
	if c.durable == 0 {
		c.durable = 2
		if _, ok := c.factory().(Durable); ok {
			c.durable = 1
		}
	}
	return c.durable == 1
}

// AppendDurable appends the canonical encoding of the node's durable
// projection — a fresh service value from the factory that has recovered
// from the current one (Durable) — to dst. ok is false, with dst
// unchanged, when the service is not Durable or the core has not
// started. It reads the current state and writes none of it.
func (c *Core) AppendDurable(dst []byte) (out []byte, ok bool, err error) {
	if !c.started || !c.IsDurable() {
		return dst, false, nil
	}
	fresh := c.factory()
	fresh.(Durable).Recover(c.state.Service)
	out, err = encodeCanonical(dst, fresh)
	if err != nil {
		return dst, false, fmt.Errorf("node: encoding the durable state: %w", err)
	}
	return out, true, nil
}

// DecodeDurable decodes a durable projection (AppendDurable's bytes) into
// a fresh service value, for Core.Restart. b is untrusted (a file on
// disk): malformed bytes give an error wrapping ErrBadDurable, never a
// panic. The result does not alias b.
func (c *Core) DecodeDurable(b []byte) (Service, error) {
	if err := CheckMsgpack(b, MaxMsgpackDepth); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadDurable, err)
	}
	svc := c.factory()
	if svc == nil {
		return nil, errors.New("node: factory returned nil service")
	}
	if _, ok := svc.(Durable); !ok {
		return nil, fmt.Errorf("%w: the service (%T) is not Durable", ErrBadDurable, svc)
	}
	if err := unmarshalMsgpack(b, svc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadDurable, err)
	}
	return svc, nil
}
