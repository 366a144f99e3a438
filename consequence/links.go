package consequence

import "math/bits"

// levelLinks are the parent links of one level: state i of the level was
// reached from state parent[i] of the previous level by the ord[i]-th
// action of its Actions list. At depth 0 parent is the index in
// Model.Init's slice. They are kept for the whole search, to rebuild
// violation paths, so a finished level is compacted: when a parent's
// position and an action's fit 32 bits together (2PC-10's largest level:
// 23 and 6 bits), both go in one word, 4 bytes a state instead of 6.
type levelLinks struct {
	parent []uint32
	ord    []uint16
	// packed holds parent<<ordBits | ord once compacted (parent and ord
	// are then nil).
	packed  []uint32
	ordBits uint8
}

// at returns state i's parent and action position.
func (l *levelLinks) at(i int) (parent uint32, ord uint16) {
	if l.packed != nil {
		w := l.packed[i]
		return w >> l.ordBits, uint16(w & (1<<l.ordBits - 1))
	}
	return l.parent[i], l.ord[i]
}

// compact packs a finished level's links if they fit.
func (l *levelLinks) compact() {
	var maxParent uint32
	var maxOrd uint16
	for i, p := range l.parent {
		maxParent = max(maxParent, p)
		maxOrd = max(maxOrd, l.ord[i])
	}
	ob := bits.Len16(maxOrd)
	if bits.Len32(maxParent)+ob > 32 || len(l.parent) == 0 {
		return
	}
	packed := make([]uint32, len(l.parent))
	for i, p := range l.parent {
		packed[i] = p<<ob | uint32(l.ord[i])
	}
	l.packed, l.ordBits, l.parent, l.ord = packed, uint8(ob), nil, nil
}

// bytes returns the links' memory.
func (l *levelLinks) bytes() uint64 {
	return 4*uint64(cap(l.packed)+cap(l.parent)) + 2*uint64(cap(l.ord))
}
