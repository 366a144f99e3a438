package services_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/bullet"
	"github.com/seed6eee2ec7/crystalball/services/chord"
	"github.com/seed6eee2ec7/crystalball/services/macetransport"
	"github.com/seed6eee2ec7/crystalball/services/pastry"
	"github.com/seed6eee2ec7/crystalball/services/paxos"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

var updateWire = flag.Bool("update", false, "rewrite services/testdata/wire.golden")

const wireGolden = "testdata/wire.golden"

// TestWireEncodingGolden pins the bytes every shipped service puts on the
// wire and in a checkpoint: each registered message (the snapshot
// protocol's too), zero and with every exported field set, and each
// service's state, fresh and with every exported field set (checkpoint and
// fingerprint encodings). The messages are msgpack arrays because of their
// _msgpack as_array markers (randtree.Disown, unmarked, is a map); removing
// or adding a marker, reordering fields or changing the codec's options
// (UseArrayEncodedStructs, say) moves these bytes, and with them peers of
// another version, stored checkpoints and the pinned state hashes and
// sizes. Every message must also decode from its bytes and re-encode to
// them. `go test ./services -run WireEncodingGolden -update` rewrites the
// file after an intended format change.
func TestWireEncodingGolden(t *testing.T) {
	mt, err := macetransport.NewSpec(macetransport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	specs := []node.Spec{
		bullet.NewSpec(bullet.Options{}),
		chord.NewSpec(chord.Options{}),
		mt,
		pastry.NewSpec(pastry.Options{}),
		paxos.NewSpec(paxos.Options{}),
		randtree.NewSpec(randtree.Options{}),
		{Name: "snapshot", Messages: snapshot.Messages()},
	}
	var out bytes.Buffer
	for _, spec := range specs {
		reg, err := node.NewRegistry(spec.Messages...)
		if err != nil {
			t.Fatalf("%s: %v", spec.Name, err)
		}
		for _, proto := range spec.Messages {
			for _, variant := range []string{"zero", "full"} {
				v := reflect.New(reflect.TypeOf(proto)).Elem()
				if variant == "full" {
					(&filler{}).fill(v, 0)
				}
				m := v.Interface().(node.Message)
				b, err := reg.EncodeMessage(m)
				if err != nil {
					t.Fatalf("%s %s: encode: %v", spec.Name, proto.MessageType(), err)
				}
				back, err := reg.DecodeMessage(m.MessageType(), b)
				if err != nil {
					t.Fatalf("%s %s (%s): decode %x: %v", spec.Name, m.MessageType(), variant, b, err)
				}
				again, err := reg.EncodeMessage(back)
				if err != nil || !bytes.Equal(again, b) {
					t.Fatalf("%s %s (%s): re-encoded %x, want %x (%v)", spec.Name, m.MessageType(), variant, again, b, err)
				}
				fmt.Fprintf(&out, "message %s %s %s %x\n", spec.Name, m.MessageType(), variant, b)
			}
		}
		if spec.New == nil {
			continue
		}
		for _, variant := range []string{"fresh", "full"} {
			svc := spec.New()
			if variant == "full" {
				(&filler{}).fill(reflect.ValueOf(svc).Elem(), 0)
			}
			st := node.State{Service: svc}
			cp, err := st.AppendCheckpoint(nil)
			if err != nil {
				t.Fatalf("%s state (%s): checkpoint: %v", spec.Name, variant, err)
			}
			fp, err := st.AppendFingerprint(nil)
			if err != nil {
				t.Fatalf("%s state (%s): fingerprint: %v", spec.Name, variant, err)
			}
			fmt.Fprintf(&out, "checkpoint %s %s %x\n", spec.Name, variant, cp)
			fmt.Fprintf(&out, "fingerprint %s %s %x\n", spec.Name, variant, fp)
		}
	}
	if *updateWire {
		if err := os.MkdirAll(filepath.Dir(wireGolden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(wireGolden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(wireGolden)
	if err != nil {
		t.Fatalf("%v (go test ./services -run WireEncodingGolden -update writes it)", err)
	}
	got := strings.Split(out.String(), "\n")
	lines := strings.Split(string(want), "\n")
	for i := 0; i < len(got) || i < len(lines); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(lines) {
			w = lines[i]
		}
		if g != w {
			t.Errorf("%s line %d:\ngot  %s\nwant %s", wireGolden, i+1, g, w)
		}
	}
}

// filler sets every exported field of a value (recursively, two elements a
// slice or map) to deterministic values of varied encoded sizes.
type filler struct{ n int64 }

func (f *filler) next() int64 { f.n++; return f.n }

var timeType = reflect.TypeFor[time.Time]()

func (f *filler) fill(v reflect.Value, depth int) {
	if depth > 6 {
		return
	}
	if v.Type() == timeType {
		v.Set(reflect.ValueOf(time.Unix(1_700_000_000+f.next(), 0).UTC()))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(f.next()%2 == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := f.next()
		x := n * n * n * 977
		if n%2 == 0 {
			x = -x
		}
		if v.OverflowInt(x) {
			x = n
		}
		v.SetInt(x)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n := uint64(f.next())
		x := n * n * n * 977
		if v.OverflowUint(x) {
			x = n
		}
		v.SetUint(x)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(f.next()) + 0.5)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", f.next()))
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			n := byte(f.next())
			v.SetBytes([]byte{n, n + 1, n + 2})
			return
		}
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			f.fill(s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			f.fill(v.Index(i), depth+1)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 2 {
			k := reflect.New(v.Type().Key()).Elem()
			f.fill(k, depth+1)
			e := reflect.New(v.Type().Elem()).Elem()
			f.fill(e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			sf := t.Field(i)
			if !sf.IsExported() || strings.HasPrefix(sf.Tag.Get("msgpack"), "-") {
				continue
			}
			f.fill(v.Field(i), depth+1)
		}
	}
}
