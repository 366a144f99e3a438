package servicetest

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/seed6eee2ec7/crystalball/node"
)

// View is a hand-built node.View over states of one service: States by
// node, IDs the nodes it holds in ascending order (NewView sorts them; a
// test that drops a node from States drops it from IDs too). Nodes returns
// IDs itself, so allocation measurements of a check see only the check's
// own allocations. No timer is scheduled.
type View[P node.Service] struct {
	States map[node.ID]P
	IDs    []node.ID
}

// NewView returns the View of states.
func NewView[P node.Service](states map[node.ID]P) *View[P] {
	return &View[P]{States: states, IDs: slices.Sorted(maps.Keys(states))}
}

// Nodes returns v.IDs.
func (v *View[P]) Nodes() []node.ID { return v.IDs }

// Service returns id's state, or nil when v does not hold it.
func (v *View[P]) Service(id node.ID) node.Service {
	if s, ok := v.States[id]; ok {
		return s
	}
	return nil
}

// TimerScheduled reports false: a View schedules no timer.
func (v *View[P]) TimerScheduled(node.ID, string) bool { return false }

// Property returns the property of props named name, failing t when there
// is none.
func Property(t testing.TB, props []node.Property, name string) node.Property {
	t.Helper()
	for _, p := range props {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no property %q", name)
	return node.Property{}
}

// CheckpointRoundTrip checkpoints st, decodes the checkpoint with spec.New
// and returns the decoded state and the checkpoint, after checking the
// codec's contract: the decoded state has st's hash, checkpoints to the
// same bytes (the encoding is canonical) and prints as st does. A broken
// contract fails t. What the checkpoint does not hold — the options the
// factory gives — is the caller's to check.
func CheckpointRoundTrip(t testing.TB, spec node.Spec, st node.State) (node.State, []byte) {
	t.Helper()
	cp, err := st.AppendCheckpoint(nil)
	if err != nil {
		t.Fatal(err)
	}
	back, err := node.DecodeCheckpoint(cp, spec.New)
	if err != nil {
		t.Fatal(err)
	}
	h1, err := st.Hash()
	if err != nil {
		t.Fatal(err)
	}
	h2, err := back.Hash()
	if err != nil {
		t.Fatal(err)
	}
	if h1 != h2 {
		t.Fatalf("hash changed across a checkpoint round trip: %v vs %v", h1, h2)
	}
	cp2, _ := back.AppendCheckpoint(nil)
	if !bytes.Equal(cp, cp2) {
		t.Fatalf("checkpoint not canonical:\n%x\n%x", cp, cp2)
	}
	if got, want := fmt.Sprint(back.Service), fmt.Sprint(st.Service); got != want {
		t.Fatalf("decoded %s, want %s", got, want)
	}
	return back, cp
}

// EncodingMatchesReflection holds a hand-written EncodeMsgpack to the
// layout reflection derives from the state's fields and tags, which is
// what the decoder reads: s encoded by its own EncodeMsgpack and plain —
// the same value as a type with s's fields and tags and no EncodeMsgpack,
// (*plainState)(s) — encoded by reflection, both with compact integers as
// the checkpoint codec writes them, must be the same bytes. A field added
// to the state without EncodeMsgpack fails t.
func EncodingMatchesReflection(t testing.TB, s, plain any) {
	t.Helper()
	var custom, reflected bytes.Buffer
	enc := msgpack.NewEncoder(&custom)
	enc.UseCompactInts(true)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	enc = msgpack.NewEncoder(&reflected)
	enc.UseCompactInts(true)
	if err := enc.Encode(plain); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(custom.Bytes(), reflected.Bytes()) {
		t.Fatalf("%v:\ncustom    %x\nreflected %x", s, custom.Bytes(), reflected.Bytes())
	}
}
