package linearizable

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
)

// RegisterOps tells Register how to read a service's operations: which
// write which value, which read, and what value a read's result holds.
type RegisterOps[V comparable] struct {
	// Initial is the register's value before any write.
	Initial V
	// Write returns the value op writes, if op is a write.
	Write func(op node.Message) (V, bool)
	// Read returns, if op is a read, the value its result holds (result
	// is nil for a read without a response: the value is then unused).
	Read func(op, result node.Message) (V, bool)
	// InitFrom returns the values the register may hold at a snapshot's
	// view (see Model.InitFrom); nil: histories from snapshots are not
	// judged.
	InitFrom func(view node.View) []V
}

// Register is the model of a read/write register: a read returns the
// value of the latest write before it (Initial before any). Operations
// that are neither a read nor a write are not allowed.
func Register[V comparable](ops RegisterOps[V]) Model {
	m := Model{
		Init: func() any { return ops.Initial },
		Step: func(state any, op, result node.Message, done bool) (bool, any) {
			return registerStep(ops, state.(V), op, result, done)
		},
	}
	if ops.InitFrom != nil {
		m.InitFrom = func(v node.View) []any { return anys(ops.InitFrom(v)) }
	}
	return m
}

// registerStep is one step of Register (and of KV's per-key register).
func registerStep[V comparable](ops RegisterOps[V], state V, op, result node.Message, done bool) (bool, any) {
	if v, ok := ops.Write(op); ok {
		return true, v
	}
	v, ok := ops.Read(op, result)
	if !ok {
		return false, state
	}
	return !done || v == state, state
}

// KVOps tells KV how to read a service's operations: the key an operation
// touches, and for that key's register what RegisterOps says.
type KVOps[K comparable, V comparable] struct {
	// Key returns the key op reads or writes.
	Key func(op node.Message) K
	// Register reads the operations on one key (Initial is every key's
	// value before its first write; InitFrom, if set, returns the values
	// the key op touches may hold at a snapshot's view — it is asked with
	// the view only, so a store with snapshot histories gives every
	// value any key may hold).
	Register RegisterOps[V]
}

// KV is the model of a key-value map of registers: a history is
// linearizable when the history of every key is (Partition by Key).
func KV[K comparable, V comparable](ops KVOps[K, V]) Model {
	m := Register(ops.Register)
	m.Partition = func(op node.Message) string { return fmt.Sprint(ops.Key(op)) }
	return m
}

func anys[V any](vs []V) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}
