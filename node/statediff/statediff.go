// Package statediff finds where two service states first differ, by
// field: the path to the first differing value and both values, decoded
// and rendered for people, with a nil map or slice told apart from an
// empty one. nodetest.Conformance and the explorer's determinism check
// name the field a clone, a checkpoint round trip or a second run of a
// handler got wrong with it, instead of printing two encodings.
//
// It compares with github.com/google/go-cmp. It is pure: no goroutines,
// no clock, safe for concurrent use.
package statediff

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/seed6eee2ec7/crystalball/node"
)

// maxValueBytes bounds one rendered value of a Difference.
const maxValueBytes = 200

// Difference is the first place two values differ: Path leads from the
// state to the value (".Peers[n3]", ".Log[2].Term"; "" is the whole
// value) and A and B render the two sides ("absent" where one side has
// no such element, "nil" and "[] (empty, not nil)" for a nil and an
// empty collection).
type Difference struct {
	Path string
	A, B string
}

// String renders d as "state.Peers[n3]: true vs absent".
func (d Difference) String() string {
	return fmt.Sprintf("state%s: %s vs %s", d.Path, d.A, d.B)
}

// IsState reports whether struct field f is part of a service's encoded
// state: exported and not tagged `msgpack:"-"`.
func IsState(f reflect.StructField) bool {
	if !f.IsExported() {
		return false
	}
	name, _, _ := strings.Cut(f.Tag.Get("msgpack"), ",")
	return name != "-"
}

// First returns the first difference between a and b (two service
// states, or any two values of one type) in their encoded state: the
// fields IsState keeps, at every level. A type whose encoding is not its
// fields (a custom msgpack encoder over unexported fields) may differ in
// its encoding where First sees nothing: compare the encodings with
// Encoded then. ok is false when First finds no difference.
func First(a, b any) (d Difference, ok bool) {
	defer func() {
		if recover() != nil { // a value cmp cannot walk: say nothing rather than fail the caller
			d, ok = Difference{}, false
		}
	}()
	r := &firstReporter{}
	if cmp.Equal(a, b, cmp.Reporter(r), stateOnly) || r.diff == nil {
		return Difference{}, false
	}
	return *r.diff, true
}

// Encoded returns the first difference between two msgpack encodings of
// a state (the canonical encoding's service body), decoded as generic
// maps and lists: fields by name for a state encoded as a map, by
// position for one encoded as an array. Bytes that do not decode are
// one difference at the root, quoting their length.
func Encoded(a, b []byte) (Difference, bool) {
	var va, vb any
	errA := msgpack.Unmarshal(a, &va)
	errB := msgpack.Unmarshal(b, &vb)
	if errA != nil || errB != nil {
		if string(a) == string(b) {
			return Difference{}, false
		}
		return Difference{A: undecodable(a, errA), B: undecodable(b, errB)}, true
	}
	return First(va, vb)
}

// undecodable renders one side of Encoded that may not decode.
func undecodable(b []byte, err error) string {
	unit, verb := "bytes", "do"
	if len(b) == 1 {
		unit, verb = "byte", "does"
	}
	if err != nil {
		return fmt.Sprintf("%d %s that %s not decode", len(b), unit, verb)
	}
	return fmt.Sprintf("%d %s", len(b), unit)
}

// stateOnly leaves out the struct fields that are not state.
var stateOnly = cmp.FilterPath(func(p cmp.Path) bool {
	sf, ok := p.Last().(cmp.StructField)
	if !ok || len(p) < 2 {
		return false
	}
	t := p.Index(-2).Type()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && !IsState(t.Field(sf.Index()))
}, cmp.Ignore())

// firstReporter records the first unequal leaf go-cmp reports.
type firstReporter struct {
	path cmp.Path
	diff *Difference
}

func (r *firstReporter) PushStep(ps cmp.PathStep) { r.path = append(r.path, ps) }
func (r *firstReporter) PopStep()                 { r.path = r.path[:len(r.path)-1] }

func (r *firstReporter) Report(rs cmp.Result) {
	if rs.Equal() || r.diff != nil {
		return
	}
	vx, vy := r.path.Last().Values()
	r.diff = &Difference{Path: pathString(r.path), A: render(vx), B: render(vy)}
}

// pathString renders a go-cmp path as field names and indexes.
func pathString(p cmp.Path) string {
	var b strings.Builder
	for _, s := range p {
		switch s := s.(type) {
		case cmp.StructField:
			b.WriteString("." + s.Name())
		case cmp.SliceIndex:
			k := s.Key()
			if k < 0 {
				ix, iy := s.SplitKeys()
				k = max(ix, iy)
			}
			fmt.Fprintf(&b, "[%d]", k)
		case cmp.MapIndex:
			k := s.Key()
			if k.Kind() == reflect.String && isIdent(k.String()) {
				b.WriteString("." + k.String())
			} else {
				b.WriteString("[" + node.FormatValue(k) + "]")
			}
		}
	}
	return b.String()
}

// isIdent reports whether s reads as a field name.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// render renders one side of a difference.
func render(v reflect.Value) string {
	if !v.IsValid() {
		return "absent"
	}
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Map, reflect.Slice, reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return "nil"
		}
		if v.Kind() != reflect.Pointer && v.Kind() != reflect.Interface && v.Len() == 0 {
			return node.FormatValue(v) + " (empty, not nil)"
		}
	}
	s := node.FormatValue(v)
	if v.Kind() == reflect.String {
		s = fmt.Sprintf("%q", s)
	}
	if len(s) > maxValueBytes {
		s = fmt.Sprintf("%s… (%d bytes)", s[:maxValueBytes], len(s))
	}
	return s
}
