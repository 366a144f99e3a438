package node

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Field is one field of a service state as people read it: its Go name
// and its value rendered by FormatValue.
type Field struct {
	Name  string
	Value string
	// Exported says whether the field is exported (part of the encoded
	// state unless tagged `msgpack:"-"`).
	Exported bool
}

// Fields lists the fields of a service state that is a struct (or a
// pointer to one), exported or not, in declaration order, leaving out
// zero-size markers (an embedded NopHandlers, msgpack's _msgpack
// struct{}). A state that is not a struct is one field named "value".
// Every value is rendered by FormatValue, unexported ones included, so
// an options struct kept in an unexported field prints its durations as
// durations.
func Fields(s Service) []Field {
	v := reflect.ValueOf(s)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return []Field{{Name: "value", Value: FormatValue(reflect.ValueOf(s)), Exported: true}}
	}
	t := v.Type()
	out := make([]Field, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type.Size() == 0 {
			continue
		}
		out = append(out, Field{Name: f.Name, Value: FormatValue(v.Field(i)), Exported: f.IsExported()})
	}
	return out
}

// FormatValue renders v as fmt's %+v does — {Name:value ...} for a
// struct, map[k:v ...] with keys in order, [a b] for a slice — except
// that it calls a String method wherever the value's type has one, also
// in unexported fields (where fmt cannot and prints a time.Duration as
// nanoseconds or a node.ID as a bare number), and renders a nested
// pointer by what it points to rather than by its address. It is
// bounded: at most 8 levels deep (deeper values print as "…"), and a
// String method that panics prints as "<panic>". The result depends on
// the value only, never on map iteration order.
func FormatValue(v reflect.Value) string {
	var b strings.Builder
	f := valueFormat{maxDepth: 8}
	f.write(&b, v, 0)
	return b.String()
}

// valueFormat renders values; maxElems > 0 bounds the elements shown of
// a collection (the rest summarised as "…+N"), exportedOnly leaves out
// unexported struct fields, and skipZero leaves out zero struct fields.
type valueFormat struct {
	maxDepth     int
	maxElems     int
	exportedOnly bool
	skipZero     bool
	// fieldSep and nameSep separate struct fields and a field's name from
	// its value (" " and ":" as %+v).
	fieldSep, nameSep string
}

var (
	stringerType = reflect.TypeFor[fmt.Stringer]()
	errorType    = reflect.TypeFor[error]()
)

func (f valueFormat) write(b *strings.Builder, v reflect.Value, depth int) {
	if !v.IsValid() {
		b.WriteString("<nil>")
		return
	}
	if depth > f.maxDepth {
		b.WriteString("…")
		return
	}
	if s, ok := stringOf(v); ok {
		b.WriteString(s)
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("<nil>")
			return
		}
		if v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct {
			b.WriteByte('&')
		}
		f.write(b, v.Elem(), depth+1)
	case reflect.Struct:
		f.writeStruct(b, v, depth)
	case reflect.Map:
		f.writeMap(b, v, depth)
	case reflect.Slice, reflect.Array:
		f.writeList(b, v, depth)
	case reflect.String:
		b.WriteString(v.String())
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		b.WriteString(strconv.FormatFloat(v.Float(), 'g', -1, 64))
	default:
		fmt.Fprintf(b, "<%s>", v.Type())
	}
}

func (f valueFormat) writeStruct(b *strings.Builder, v reflect.Value, depth int) {
	t := v.Type()
	b.WriteByte('{')
	first := true
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Type.Size() == 0 || (f.exportedOnly && !sf.IsExported()) || (f.skipZero && v.Field(i).IsZero()) {
			continue
		}
		if !first {
			b.WriteString(f.sep())
		}
		first = false
		b.WriteString(sf.Name)
		b.WriteString(f.nameSeparator())
		f.write(b, v.Field(i), depth+1)
	}
	b.WriteByte('}')
}

func (f valueFormat) writeMap(b *strings.Builder, v reflect.Value, depth int) {
	type entry struct{ k, v string }
	entries := make([]entry, 0, v.Len())
	it := v.MapRange()
	for it.Next() {
		var kb, vb strings.Builder
		f.write(&kb, it.Key(), depth+1)
		f.write(&vb, it.Value(), depth+1)
		entries = append(entries, entry{kb.String(), vb.String()})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.k, b.k) })
	b.WriteString("map[")
	for i, e := range entries {
		if f.maxElems > 0 && i == f.maxElems {
			fmt.Fprintf(b, " …+%d", len(entries)-i)
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(e.k)
		b.WriteByte(':')
		b.WriteString(e.v)
	}
	b.WriteByte(']')
}

func (f valueFormat) writeList(b *strings.Builder, v reflect.Value, depth int) {
	b.WriteByte('[')
	for i := range v.Len() {
		if f.maxElems > 0 && i == f.maxElems {
			fmt.Fprintf(b, " …+%d", v.Len()-i)
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		f.write(b, v.Index(i), depth+1)
	}
	b.WriteByte(']')
}

func (f valueFormat) sep() string {
	if f.fieldSep == "" {
		return " "
	}
	return f.fieldSep
}

func (f valueFormat) nameSeparator() string {
	if f.nameSep == "" {
		return ":"
	}
	return f.nameSep
}

// stringOf renders v with its type's String (or Error) method when it
// has one: directly when v may be read as an interface, else — a value
// of an unexported field — through a copy rebuilt from its kind's value,
// which works for the basic kinds (a time.Duration, a node.ID). A nil pointer is left to the caller.
func stringOf(v reflect.Value) (s string, ok bool) {
	t := v.Type()
	if !t.Implements(stringerType) && !t.Implements(errorType) {
		return "", false
	}
	if (t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface) && v.IsNil() {
		return "", false
	}
	if !v.CanInterface() {
		c, ok := rebuild(v)
		if !ok {
			return "", false
		}
		v = c
	}
	defer func() {
		if recover() != nil {
			s, ok = "<panic>", true
		}
	}()
	switch x := v.Interface().(type) {
	case error:
		return x.Error(), true
	case fmt.Stringer:
		return x.String(), true
	}
	return "", false
}

// rebuild copies a value read from an unexported field into one that
// may be read as an interface, for the kinds whose value reflection
// exposes.
func rebuild(v reflect.Value) (reflect.Value, bool) {
	c := reflect.New(v.Type()).Elem()
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		c.SetInt(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		c.SetUint(v.Uint())
	case reflect.String:
		c.SetString(v.String())
	case reflect.Bool:
		c.SetBool(v.Bool())
	case reflect.Float32, reflect.Float64:
		c.SetFloat(v.Float())
	default:
		return reflect.Value{}, false
	}
	return c, true
}
