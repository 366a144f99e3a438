package randtree

import (
	"slices"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The sets of a RandTree state (children, siblings, peers) are ascending,
// duplicate-free []node.ID slices rather than maps: the msgpack encoding of
// a sorted slice is already canonical, so checkpoints and hashes need no map
// sorting, and a tree node's sets are small enough that a binary search beats
// hashing. An empty set is always nil, never an empty slice, because nil and
// []node.ID{} encode differently and equal states must encode equally.

// contains reports whether id is in the sorted set s.
func contains(s []node.ID, id node.ID) bool {
	_, ok := slices.BinarySearch(s, id)
	return ok
}

// insert adds id to the sorted set s (in place when capacity allows) and
// returns the updated set.
func insert(s []node.ID, id node.ID) []node.ID {
	i, ok := slices.BinarySearch(s, id)
	if ok {
		return s
	}
	return slices.Insert(s, i, id)
}

// remove deletes id from the sorted set s in place and returns the updated
// set, nil when it becomes empty.
func remove(s []node.ID, id node.ID) []node.ID {
	i, ok := slices.BinarySearch(s, id)
	if !ok {
		return s
	}
	s = slices.Delete(s, i, i+1)
	if len(s) == 0 {
		return nil
	}
	return s
}

// without returns a fresh sorted set holding s minus id; nil when empty. The
// result never aliases s, so it is safe to put in a message.
func without(s []node.ID, id node.ID) []node.ID {
	var out []node.ID
	for _, x := range s {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}

// setOf returns a fresh sorted set of ids, leaving out None and exclude. It
// is how untrusted lists (a received sibling list) become state.
func setOf(ids []node.ID, exclude node.ID) []node.ID {
	var out []node.ID
	for _, id := range ids {
		if id != node.None && id != exclude {
			out = insert(out, id)
		}
	}
	return out
}

// formatIDs renders ids as the paper writes them: [n9 n13].
func formatIDs(ids []node.ID) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(id.String())
	}
	b.WriteByte(']')
	return b.String()
}
