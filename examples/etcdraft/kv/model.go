package kv

import (
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/linearizable"
)

// Model is the store's sequential specification, what the property
// Linearizable checks the client history against: a map of registers, in
// which a Get returns the value of the latest Put of its key ("" before
// any). At a snapshot (a history that begins in the middle of a run) a
// key may hold any value a node has applied or is proposing.
func Model() linearizable.Model {
	return linearizable.KV(linearizable.KVOps[string, string]{
		Key: func(op node.Message) string {
			switch o := op.(type) {
			case Put:
				return o.Key
			case Get:
				return o.Key
			}
			return ""
		},
		Register: linearizable.RegisterOps[string]{
			Write: func(op node.Message) (string, bool) {
				p, ok := op.(Put)
				return p.Value, ok
			},
			Read: func(op, result node.Message) (string, bool) {
				if _, ok := op.(Get); !ok {
					return "", false
				}
				v, _ := result.(Value)
				return v.Value, true
			},
			InitFrom: valuesAt,
		},
	})
}

// valuesAt returns every value a key may hold at view: "", every value a
// node applied, and every value a node has yet to write. Nil when the
// view holds no store.
func valuesAt(v node.View) []string {
	seen := map[string]bool{"": true}
	out := []string{""}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	stores := 0
	for _, id := range v.Nodes() {
		o, ok := observedRef(v, id)
		if !ok {
			continue
		}
		stores++
		for _, val := range o.App.KV {
			add(val)
		}
		for _, p := range o.App.Pending {
			if !p.Read {
				add(p.Value)
			}
		}
	}
	if stores == 0 {
		return nil
	}
	slices.Sort(out)
	return out
}
