package node

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// The decode memory budget. CheckMsgpack bounds what a length header can
// make the decoder pre-allocate, but not what legitimate-looking elements
// decode into: a 1 MiB body holding a million one-byte integers in an
// []ID decodes into 8 MiB of slice, and msgpack/v5 grows the slice step by
// step, allocating about 49 MiB in all. DecodeMessage therefore estimates,
// from the body and the registered type, the memory decoding will allocate
// and refuses bodies whose estimate exceeds DecodeBudgetFactor times their
// size (plus DecodeBudgetSlack), before allocating anything.

const (
	// DecodeBudgetFactor is how many bytes of decoded memory one byte of
	// message body may cost.
	DecodeBudgetFactor = 32
	// DecodeBudgetSlack is the budget every body gets on top of its
	// factor, in bytes, so that small messages are never refused.
	DecodeBudgetSlack = 64 << 10
	// sliceGrowth is msgpack/v5's amortised allocation per slice element
	// relative to the element size (measured: a million 8-byte elements
	// allocate about 49 MB while the slice grows).
	sliceGrowth = 6
	// mapEntryOverhead approximates a Go map's per-entry bookkeeping.
	mapEntryOverhead = 16
)

// ErrDecodeBudget is wrapped by DecodeMessage's error when a body would
// decode into more memory than its budget (see DecodeBudgetFactor).
var ErrDecodeBudget = errors.New("node: message would decode into more memory than its budget")

// decodeBudget is the memory a body of n bytes may decode into.
func decodeBudget(n int) int { return DecodeBudgetFactor*n + DecodeBudgetSlack }

var interfaceType = reflect.TypeFor[any]()

// decodeCost estimates the bytes msgpack/v5 allocates decoding b (which
// passed CheckMsgpack) into a value of type t, walking the encoding and
// the type side by side. It stops as soon as the estimate exceeds limit.
func decodeCost(b []byte, t reflect.Type, limit int) (int, error) {
	w := costWalker{b: b, limit: limit}
	if err := w.walk(t); err != nil {
		return w.cost, err
	}
	return w.cost, nil
}

type costWalker struct {
	b     []byte
	pos   int
	cost  int
	limit int
}

var errOverBudget = errors.New("over budget")

func (w *costWalker) add(n int) error {
	w.cost += n
	if w.cost > w.limit {
		return errOverBudget
	}
	return nil
}

// walk accounts for the object at w.pos decoded into t and moves past it.
func (w *costWalker) walk(t reflect.Type) error {
	h, err := readMsgpackHeader(w.b, w.pos)
	if err != nil {
		return err
	}
	if w.b[w.pos] == 0xc0 { // nil allocates nothing
		w.pos += h.size
		return nil
	}
	for t.Kind() == reflect.Pointer {
		if err := w.add(int(t.Elem().Size())); err != nil {
			return err
		}
		t = t.Elem()
	}
	w.pos += h.size + h.payload
	if err := w.add(h.payload); err != nil { // strings and bytes are copied
		return err
	}
	switch {
	case h.children == 0:
		return nil
	case h.isMap:
		return w.walkMap(t, h.children/2)
	default:
		return w.walkArray(t, h.children)
	}
}

func (w *costWalker) walkArray(t reflect.Type, n int) error {
	var fields []reflect.Type
	elem := interfaceType
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		elem = t.Elem()
		if t.Kind() == reflect.Slice {
			if err := w.add(n * int(elem.Size()) * sliceGrowth); err != nil {
				return err
			}
		}
	case reflect.Struct:
		fields = structFields(t).ordered
	default:
		if err := w.add(n * int(interfaceType.Size()) * sliceGrowth); err != nil {
			return err
		}
	}
	for i := range n {
		et := elem
		if fields != nil {
			et = interfaceType
			if i < len(fields) {
				et = fields[i]
			}
		}
		if err := w.walk(et); err != nil {
			return err
		}
	}
	return nil
}

func (w *costWalker) walkMap(t reflect.Type, n int) error {
	key, val := interfaceType, interfaceType
	var byName map[string]reflect.Type
	switch t.Kind() {
	case reflect.Map:
		key, val = t.Key(), t.Elem()
	case reflect.Struct:
		byName = structFields(t).byName
		key = reflect.TypeFor[string]()
	}
	if byName == nil {
		if err := w.add(n * 2 * (int(key.Size()) + int(val.Size()) + mapEntryOverhead)); err != nil {
			return err
		}
	}
	for range n {
		start := w.pos
		if err := w.walk(key); err != nil {
			return err
		}
		vt := val
		if byName != nil {
			vt = interfaceType
			if ft, ok := byName[msgpackString(w.b[start:w.pos])]; ok {
				vt = ft
			}
		}
		if err := w.walk(vt); err != nil {
			return err
		}
	}
	return nil
}

// msgpackString returns the string encoded in b, or "" if b is no string.
func msgpackString(b []byte) string {
	h, err := readMsgpackHeader(b, 0)
	if err != nil || h.children != 0 || h.size+h.payload != len(b) {
		return ""
	}
	return string(b[h.size:])
}

// fieldTypes are a struct's msgpack fields: in encoding order (for
// as_array structs) and by name.
type fieldTypes struct {
	ordered []reflect.Type
	byName  map[string]reflect.Type
}

var fieldCache sync.Map // reflect.Type → fieldTypes

func structFields(t reflect.Type) fieldTypes {
	if f, ok := fieldCache.Load(t); ok {
		return f.(fieldTypes)
	}
	f := fieldTypes{byName: make(map[string]reflect.Type)}
	collectFields(t, &f)
	fieldCache.Store(t, f)
	return f
}

func collectFields(t reflect.Type, f *fieldTypes) {
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("msgpack"), ",")
		if name == "-" || sf.Name == "_msgpack" {
			continue
		}
		if sf.Anonymous && name == "" && sf.Type.Kind() == reflect.Struct {
			collectFields(sf.Type, f) // msgpack/v5 inlines embedded structs
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f.ordered = append(f.ordered, sf.Type)
		f.byName[name] = sf.Type
	}
}

// checkDecodeBudget refuses body when decoding it into t would allocate
// more than its budget.
func checkDecodeBudget(body []byte, t reflect.Type) error {
	limit := decodeBudget(len(body))
	_, err := decodeCost(body, t, limit)
	if errors.Is(err, errOverBudget) {
		return fmt.Errorf("%w: %d-byte body, more than %d bytes", ErrDecodeBudget, len(body), limit)
	}
	return err
}
