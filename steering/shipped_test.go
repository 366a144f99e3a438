package steering

import (
	"errors"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// ShipPath takes the path's earliest event a filter can stop, whichever
// node's; a path of faults alone ships nothing. The file round-trips,
// keeping a filter shipped against two paths once.
func TestShipPathAndTheFileRoundTrip(t *testing.T) {
	path := []consequence.ActorAction{
		{Kind: consequence.ActReset, Node: 2},
		{Kind: consequence.ActTimer, Node: 3, Timer: "ask"},
		{Kind: consequence.ActDeliver, Node: 1, Peer: 3, Msg: grantAcquire{}},
	}
	s, ok := ShipPath("OneHolder", node.Safety, errors.New("two holders"), path)
	if !ok || s.Filter.String() != "n3: postpone timer ask" || s.Why.Source != "shipped" || s.Why.Property != "OneHolder" || len(s.Why.Path) != 3 {
		t.Fatalf("ShipPath: %+v, %v", s, ok)
	}
	if _, ok := ShipPath("OneHolder", node.Safety, nil, path[:1]); ok {
		t.Fatal("a path of faults alone shipped a filter")
	}
	b, err := EncodeShipped([]ShippedFilter{s, s})
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeShipped(b)
	if err != nil || len(got) != 1 || got[0].Filter != s.Filter || got[0].Why.Error != "two holders" {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
}

// Bad files are refused whole, with an error wrapping ErrShipped.
func TestDecodeShippedRefusesBadFiles(t *testing.T) {
	for name, in := range map[string]string{
		"not json":     "{",
		"no format":    `{"filters":[]}`,
		"other format": `{"format":"crystalball-shipped-filters/9","filters":[]}`,
		"no node":      `{"format":"` + ShippedFormat + `","filters":[{"filter":{"Kind":1}}]}`,
		"unknown kind": `{"format":"` + ShippedFormat + `","filters":[{"filter":{"Kind":9,"Node":1}}]}`,
		"too big":      `{"format":"` + ShippedFormat + `","x":"` + strings.Repeat("a", MaxShippedBytes) + `"}`,
		"too many":     `{"format":"` + ShippedFormat + `","filters":[` + strings.Repeat(`{"filter":{"Kind":1,"Node":1}},`, MaxShippedFilters) + `{"filter":{"Kind":1,"Node":1}}]}`,
	} {
		if _, err := DecodeShipped([]byte(in)); !errors.Is(err, ErrShipped) {
			t.Errorf("%s: %v, want ErrShipped", name, err)
		}
	}
}

// FuzzDecodeShipped: any bytes give filters of a known kind at a node, or
// an error wrapping ErrShipped; never a panic.
func FuzzDecodeShipped(f *testing.F) {
	b, _ := EncodeShipped([]ShippedFilter{{Filter: Filter{Kind: FilterTimer, Node: 2, Timer: "ask"}, Why: Explanation{Source: "shipped"}}})
	f.Add(b)
	f.Add([]byte(`{"format":"` + ShippedFormat + `","filters":null}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		fs, err := DecodeShipped(in)
		if err != nil {
			if !errors.Is(err, ErrShipped) {
				t.Fatalf("error %v does not wrap ErrShipped", err)
			}
			return
		}
		for _, s := range fs {
			if s.Filter.Node == node.None || s.Filter.Kind < FilterMessage || s.Filter.Kind > FilterTransportError {
				t.Fatalf("decoded a bad filter %+v", s.Filter)
			}
		}
	})
}

// A node installs its own shipped filters, and only in mode Steer; a
// message filter breaks its connection by the node's rule (a type not
// declared lossy: drop+break), whatever the file said.
func TestLayerInstallsItsShippedFilters(t *testing.T) {
	spec := grantSpec()
	ship := []ShippedFilter{
		{Filter: Filter{Kind: FilterMessage, Node: 1, From: 3, Type: "grant.Acquire"}, Why: Explanation{Source: "shipped", Property: "OneHolder"}},
		{Filter: Filter{Kind: FilterTimer, Node: 2, Timer: "ask"}, Why: Explanation{Source: "shipped", Property: "OneHolder"}},
	}
	for _, mode := range []Mode{Steer, Debug} {
		l, _ := newTestLive(t, LayerConfig{Controller: Config{Mode: mode, Spec: spec, LivenessWalks: LivenessWalks{WalkOptions: WalkOptions{Walks: -1}}}, Shipped: ship}, grantServer(t))
		st := l.Status()
		if mode == Debug {
			if len(st.Filters) != 0 {
				t.Fatalf("mode debug installed %v", st.Filters)
			}
			continue
		}
		if len(st.Reasons) != 1 || st.Reasons[0].Filter != "n1: drop+break grant.Acquire from n3" || st.Reasons[0].Why.Source != "shipped" {
			t.Fatalf("mode steer: %+v, want n1's own filter, breaking, explained as shipped", st.Reasons)
		}
	}
}
