package steering

import (
	"reflect"
	"testing"
)

// setEveryCounter sets every counter of v (a struct, through its embedded
// parts) to n, and gives every map one key counted n.
func setEveryCounter(t *testing.T, v reflect.Value, n uint64) {
	t.Helper()
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			setEveryCounter(t, v.Field(i), n)
		}
	case reflect.Uint64:
		v.SetUint(n)
	case reflect.Float64:
		v.SetFloat(float64(n))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		elem := reflect.New(v.Type().Elem()).Elem()
		setEveryCounter(t, elem, n)
		m.SetMapIndex(reflect.ValueOf("p"), elem)
		v.Set(m)
	default:
		t.Fatalf("Stats holds a %v: teach this test how it sums", v.Type())
	}
}

// checkEveryCounter reports every counter of v (path names it) that is
// not want; keep names the counters that take the larger of two, not the
// sum.
func checkEveryCounter(t *testing.T, v reflect.Value, path string, want, keep uint64, larger map[string]bool) {
	t.Helper()
	w := want
	if larger[path] {
		w = keep
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			name := v.Type().Field(i).Name
			if v.Type().Field(i).Anonymous {
				name = ""
			}
			p := path
			if name != "" {
				p = path + "." + name
			}
			checkEveryCounter(t, v.Field(i), p, want, keep, larger)
		}
	case reflect.Uint64:
		if v.Uint() != w {
			t.Errorf("%s = %d after Add, want %d: Add does not sum it", path, v.Uint(), w)
		}
	case reflect.Float64:
		if v.Float() != float64(w) {
			t.Errorf("%s = %v after Add, want %d: Add does not sum it", path, v.Float(), w)
		}
	case reflect.Map:
		e := v.MapIndex(reflect.ValueOf("p"))
		if !e.IsValid() || v.Len() != 1 {
			t.Errorf("%s = %v after Add, want its one key summed", path, v)
			return
		}
		checkEveryCounter(t, e, path+"[p]", want, keep, larger)
	}
}

// Add sums every counter of Stats, whatever part declares it: a counter
// added to RoundStats, GateStats or LayerStats and forgotten by its add
// method fails here.
func TestStatsAddSumsEveryCounter(t *testing.T) {
	var a, b Stats
	setEveryCounter(t, reflect.ValueOf(&a).Elem(), 1)
	setEveryCounter(t, reflect.ValueOf(&b).Elem(), 1)
	a.Add(b)
	checkEveryCounter(t, reflect.ValueOf(a), "Stats", 2, 1, map[string]bool{
		"Stats.LiftsByProperty[p].LongestFailingSeconds": true, // the longer of the two
	})
	// b is untouched: Add reads its maps, never writes them.
	checkEveryCounter(t, reflect.ValueOf(b), "Stats", 1, 1, nil)
}
