package consequence

import "github.com/seed6eee2ec7/crystalball/node"

// levelIndex finds a state of the level being built by its fingerprint, so
// that the sleep sets of all the paths that reach it at that depth can be
// intersected. It is an open-addressing table of positions in the level's
// fingerprint slice (position+1; 0 is an empty slot): 4 bytes a slot and no
// fingerprint of its own, filled at most half. The search keeps one per
// shard group, used by one goroutine at a time, and empties it each level.
type levelIndex struct {
	slots []uint32
	n     int
}

// reset empties the index, keeping its memory.
func (x *levelIndex) reset() {
	clear(x.slots)
	x.n = 0
}

// find returns the position of the state with fingerprint fp, if it was
// added; fpOf(i) is the fingerprint of the level's state i.
func (x *levelIndex) find(fp node.Hash, fpOf func(int) node.Hash) (int, bool) {
	if x.n == 0 {
		return 0, false
	}
	mask := uint64(len(x.slots) - 1)
	for i := fp.Lo & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			return 0, false
		}
		if fpOf(int(s-1)) == fp {
			return int(s - 1), true
		}
	}
}

// add records that the level's state at position at has fingerprint fp
// (fpOf(at) == fp), which must not be in the index yet.
func (x *levelIndex) add(fp node.Hash, at int, fpOf func(int) node.Hash) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow(fpOf)
	}
	mask := uint64(len(x.slots) - 1)
	for i := fp.Lo & mask; ; i = (i + 1) & mask {
		if x.slots[i] == 0 {
			x.slots[i] = uint32(at + 1)
			x.n++
			return
		}
	}
}

// grow doubles the table (at least 1024 slots) and reinserts its entries.
func (x *levelIndex) grow(fpOf func(int) node.Hash) {
	old := x.slots
	x.slots = make([]uint32, max(1024, 2*len(old)))
	x.n = 0
	for _, s := range old {
		if s != 0 {
			x.add(fpOf(int(s-1)), int(s-1), fpOf)
		}
	}
}

// touch loads fp's home slot, so that the cache misses of several states'
// lookups overlap (the search touches a parent's successors before it
// inserts them, as it does the visited set's buckets).
func (x *levelIndex) touch(fp node.Hash) uint32 {
	if len(x.slots) == 0 {
		return 0
	}
	return x.slots[fp.Lo&uint64(len(x.slots)-1)]
}

// bytes returns the index's memory.
func (x *levelIndex) bytes() uint64 { return 4 * uint64(cap(x.slots)) }
