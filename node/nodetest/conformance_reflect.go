package nodetest

import (
	"fmt"
	"reflect"
	"strings"
	"time"
)

// isState reports whether struct field f is part of a service's encoded
// state: exported and not tagged `msgpack:"-"`.
func isState(f reflect.StructField) bool {
	if !f.IsExported() {
		return false
	}
	name, _, _ := strings.Cut(f.Tag.Get("msgpack"), ",")
	return name != "-"
}

// structOf returns the struct a service value is or points to.
func structOf(v reflect.Value) (reflect.Value, bool) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return reflect.Value{}, false
		}
		v = v.Elem()
	}
	return v, v.Kind() == reflect.Struct
}

// stateFields names the top-level state fields of a service.
func stateFields(svc any) []string {
	s, ok := structOf(reflect.ValueOf(svc))
	if !ok {
		return nil
	}
	var names []string
	for i := range s.NumField() {
		if f := s.Type().Field(i); isState(f) {
			names = append(names, f.Name)
		}
	}
	return names
}

// perturbField changes the named field of the service svc points to; it
// reports false when it found nothing to change.
func perturbField(svc any, name string) bool {
	s, ok := structOf(reflect.ValueOf(svc))
	if !ok || !s.CanSet() {
		return false
	}
	return perturb(s.FieldByName(name))
}

var timeType = reflect.TypeFor[time.Time]()

// perturb changes v so that its encoding changes: a scalar moves by one,
// a collection gains or loses an element, a pointer or interface goes
// nil, a struct changes its first state field that can change.
func perturb(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(v.Uint() + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(v.Float() + 1)
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Slice:
		if v.Len() > 0 {
			v.Set(v.Slice(0, v.Len()-1))
		} else {
			v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
		}
	case reflect.Map:
		return perturbMap(v)
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		} else {
			v.SetZero()
		}
	case reflect.Interface:
		if v.IsNil() {
			return false
		}
		v.SetZero()
	case reflect.Array:
		return v.Len() > 0 && perturb(v.Index(0))
	case reflect.Struct:
		return perturbStruct(v)
	default:
		return false
	}
	return true
}

func perturbMap(v reflect.Value) bool {
	if v.Len() > 0 {
		m := reflect.MakeMapWithSize(v.Type(), v.Len())
		iter := v.MapRange()
		skipped := false
		for iter.Next() {
			if !skipped {
				skipped = true
				continue
			}
			m.SetMapIndex(iter.Key(), iter.Value())
		}
		v.Set(m)
		return true
	}
	m := reflect.MakeMapWithSize(v.Type(), 1)
	m.SetMapIndex(reflect.Zero(v.Type().Key()), reflect.Zero(v.Type().Elem()))
	v.Set(m)
	return true
}

func perturbStruct(v reflect.Value) bool {
	if v.Type() == timeType {
		v.Set(reflect.ValueOf(v.Interface().(time.Time).Add(time.Second)))
		return true
	}
	for i := range v.NumField() {
		if isState(v.Type().Field(i)) && perturb(v.Field(i)) {
			return true
		}
	}
	return false
}

// sharedMemory returns the path of the first slice, map or pointer that a
// and b (two values of one type) share within their encoded state, or ""
// when they share none. Strings are immutable and may be shared.
func sharedMemory(a, b any) string {
	w := aliasWalk{seen: map[[2]uintptr]bool{}}
	return w.walk(reflect.ValueOf(a), reflect.ValueOf(b), "state")
}

type aliasWalk struct{ seen map[[2]uintptr]bool }

func (w *aliasWalk) walk(a, b reflect.Value, path string) string {
	if !a.IsValid() || !b.IsValid() || a.Type() != b.Type() {
		return ""
	}
	switch a.Kind() {
	case reflect.Pointer:
		return w.walkPointer(a, b, path)
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return ""
		}
		return w.walk(a.Elem(), b.Elem(), path)
	case reflect.Slice:
		if a.Len() > 0 && b.Len() > 0 && a.Pointer() == b.Pointer() {
			return path
		}
		return w.walkElements(a, b, path)
	case reflect.Array:
		return w.walkElements(a, b, path)
	case reflect.Map:
		return w.walkMap(a, b, path)
	case reflect.Struct:
		for i := range a.NumField() {
			if f := a.Type().Field(i); isState(f) {
				if p := w.walk(a.Field(i), b.Field(i), path+"."+f.Name); p != "" {
					return p
				}
			}
		}
	}
	return ""
}

func (w *aliasWalk) walkPointer(a, b reflect.Value, path string) string {
	if a.IsNil() || b.IsNil() {
		return ""
	}
	if a.Pointer() == b.Pointer() {
		return path
	}
	key := [2]uintptr{a.Pointer(), b.Pointer()}
	if w.seen[key] {
		return ""
	}
	w.seen[key] = true
	return w.walk(a.Elem(), b.Elem(), path)
}

func (w *aliasWalk) walkElements(a, b reflect.Value, path string) string {
	for i := range min(a.Len(), b.Len()) {
		if p := w.walk(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
			return p
		}
	}
	return ""
}

func (w *aliasWalk) walkMap(a, b reflect.Value, path string) string {
	if a.IsNil() || b.IsNil() {
		return ""
	}
	if a.Pointer() == b.Pointer() {
		return path
	}
	iter := a.MapRange()
	for iter.Next() {
		bv := b.MapIndex(iter.Key())
		if p := w.walk(iter.Value(), bv, fmt.Sprintf("%s[%v]", path, iter.Key())); p != "" {
			return p
		}
	}
	return ""
}
