package node

import (
	"bytes"
	"slices"
)

// canonicalMsgpack rewrites the msgpack object in b so that the entries of
// every map appear in increasing order of their encoded key bytes, at every
// nesting level. Two encodings of equal Go values then produce equal bytes,
// whatever order Go's map iteration chose when they were encoded. (msgpack/v5's
// SetSortMapKeys covers only string-keyed maps, so a map[ID]bool would
// otherwise encode in random order.)
//
// The result is appended to dst. When b holds no map with two or more entries
// it is appended unchanged, which is the common, allocation-free case.
func canonicalMsgpack(dst, b []byte) ([]byte, error) {
	if !hasMultiEntryMap(b) {
		return append(dst, b...), nil
	}
	out, _, err := appendCanonicalObject(dst, b, 0)
	return out, err
}

// hasMultiEntryMap reports whether any map in b has at least two entries.
func hasMultiEntryMap(b []byte) bool {
	for pos := 0; pos < len(b); {
		h, err := readMsgpackHeader(b, pos)
		if err != nil {
			return true // let the full pass report the error
		}
		if h.isMap && h.children >= 4 {
			return true
		}
		pos += h.size + h.payload
	}
	return false
}

type mapEntry struct{ key, value []byte }

// appendCanonicalObject appends the canonical form of the object at b[pos]
// to dst and returns the offset past the object.
func appendCanonicalObject(dst, b []byte, pos int) ([]byte, int, error) {
	h, err := readMsgpackHeader(b, pos)
	if err != nil {
		return nil, 0, err
	}
	end := pos + h.size + h.payload
	if end > len(b) {
		return nil, 0, ErrMsgpackTruncated
	}
	if h.children == 0 {
		return append(dst, b[pos:end]...), end, nil
	}
	dst = append(dst, b[pos:pos+h.size]...)
	pos = end
	if !h.isMap {
		for i := 0; i < h.children; i++ {
			if dst, pos, err = appendCanonicalObject(dst, b, pos); err != nil {
				return nil, 0, err
			}
		}
		return dst, pos, nil
	}
	entries := make([]mapEntry, h.children/2)
	for i := range entries {
		var k, v []byte
		if k, pos, err = appendCanonicalObject(nil, b, pos); err != nil {
			return nil, 0, err
		}
		if v, pos, err = appendCanonicalObject(nil, b, pos); err != nil {
			return nil, 0, err
		}
		entries[i] = mapEntry{k, v}
	}
	slices.SortFunc(entries, func(x, y mapEntry) int { return bytes.Compare(x.key, y.key) })
	for _, e := range entries {
		dst = append(dst, e.key...)
		dst = append(dst, e.value...)
	}
	return dst, pos, nil
}
