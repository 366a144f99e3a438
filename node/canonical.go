package node

import (
	"bytes"
	"slices"
	"sync"
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
	s := canonPool.Get().(*canonScratch)
	defer canonPool.Put(s)
	out, _, err := s.appendObject(dst, b, 0, 0)
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

// entrySpan locates one canonicalised map entry in a scratch buffer: the key
// is buf[k0:k1], the value buf[k1:end].
type entrySpan struct{ k0, k1, end int }

// canonScratch holds one entry buffer and span list per nesting depth, so a
// map's entries are canonicalised into memory that nested maps (which use the
// next depth) never touch, and the buffers are reused across calls.
type canonScratch struct {
	bufs  [][]byte
	spans [][]entrySpan
}

var canonPool = sync.Pool{New: func() any { return new(canonScratch) }}

// appendObject appends the canonical form of the object at b[pos] to dst and
// returns the offset past the object. depth selects the scratch level.
func (s *canonScratch) appendObject(dst, b []byte, pos, depth int) ([]byte, int, error) {
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
			if dst, pos, err = s.appendObject(dst, b, pos, depth+1); err != nil {
				return nil, 0, err
			}
		}
		return dst, pos, nil
	}
	for len(s.bufs) <= depth {
		s.bufs = append(s.bufs, nil)
		s.spans = append(s.spans, nil)
	}
	tmp, spans := s.bufs[depth][:0], s.spans[depth][:0]
	for i := 0; i < h.children/2; i++ {
		k0 := len(tmp)
		if tmp, pos, err = s.appendObject(tmp, b, pos, depth+1); err != nil {
			return nil, 0, err
		}
		k1 := len(tmp)
		if tmp, pos, err = s.appendObject(tmp, b, pos, depth+1); err != nil {
			return nil, 0, err
		}
		spans = append(spans, entrySpan{k0, k1, len(tmp)})
	}
	slices.SortFunc(spans, func(x, y entrySpan) int {
		return bytes.Compare(tmp[x.k0:x.k1], tmp[y.k0:y.k1])
	})
	for _, e := range spans {
		dst = append(dst, tmp[e.k0:e.end]...)
	}
	s.bufs[depth], s.spans[depth] = tmp, spans
	return dst, pos, nil
}
