package node

import (
	"encoding/binary"
	"errors"
	"reflect"
	"runtime"
	"testing"
)

// budgetReply mirrors randtree's JoinReply: a root and an ID list.
type budgetReply struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	Root     ID
	Siblings []ID
}

func (budgetReply) MessageType() string { return "test.budgetReply" }

// budgetMember is a map-encoded struct with a nested slice.
type budgetMember struct {
	ID    ID
	Addr  string
	Peers []ID
}

func (budgetMember) MessageType() string { return "test.budgetMember" }

// idListBody encodes [1, [n × elem]].
func idListBody(n int, elem byte) []byte {
	b := []byte{0x92, 0x01, 0xdd}
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	for range n {
		b = append(b, elem)
	}
	return b
}

// TestDecodeBudgetRefusesAmplification: a 1 MiB JoinReply-like body of a
// million one-byte IDs, which msgpack/v5 decodes with ~49 MB of
// allocations, is refused before decoding allocates anything
// proportional to it; an ordinary message still decodes.
func TestDecodeBudgetRefusesAmplification(t *testing.T) {
	reg, err := NewRegistry(budgetReply{}, budgetMember{})
	if err != nil {
		t.Fatal(err)
	}
	body := idListBody(1<<20, 0x01)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = reg.DecodeMessage("test.budgetReply", body)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrDecodeBudget) {
		t.Fatalf("err = %v, want ErrDecodeBudget", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(body)) {
		t.Errorf("refusing a %d-byte body allocated %d bytes", len(body), alloc)
	}

	ok, err := reg.EncodeMessage(budgetReply{Root: 1, Siblings: []ID{2, 3, 4}})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := reg.DecodeMessage("test.budgetReply", ok); err != nil || len(m.(budgetReply).Siblings) != 3 {
		t.Fatalf("ordinary reply: %v, %v", m, err)
	}
	members := make([]byte, 0)
	mb, err := reg.EncodeMessage(budgetMember{ID: 7, Addr: "127.0.0.1:7000", Peers: make([]ID, 1000)})
	if err != nil {
		t.Fatal(err)
	}
	members = append(members, mb...)
	if _, err := reg.DecodeMessage("test.budgetMember", members); err != nil {
		t.Fatalf("member: %v", err)
	}
}

// TestDecodeCostTracksAllocation: the estimate is within a small factor of
// what decoding really allocates, so the budget is neither toothless nor
// refusing honest messages.
func TestDecodeCostTracksAllocation(t *testing.T) {
	reg, err := NewRegistry(budgetReply{})
	if err != nil {
		t.Fatal(err)
	}
	body := idListBody(1000, 0x05)
	est, err := decodeCost(body, reg.byName["test.budgetReply"], 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(5, func() { reg.DecodeMessage("test.budgetReply", body) })
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	reg.DecodeMessage("test.budgetReply", body)
	runtime.ReadMemStats(&after)
	real := int(after.TotalAlloc - before.TotalAlloc)
	t.Logf("estimate %d bytes, real %d bytes in %v allocations", est, real, allocs)
	if est < real/2 || est > 8*real {
		t.Errorf("estimate %d bytes, real %d", est, real)
	}
}

// FuzzDecodeCost: the estimate never panics on bodies that pass
// CheckMsgpack, for struct, slice, map and interface targets, and a body
// it accepts decodes without error or with an ordinary decode error.
func FuzzDecodeCost(f *testing.F) {
	reg, err := NewRegistry(budgetReply{}, budgetMember{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(idListBody(3, 0x01))
	f.Add([]byte{0x83, 0xa2, 'I', 'D', 0x07, 0xa4, 'A', 'd', 'd', 'r', 0xa1, 'x', 0xa5, 'P', 'e', 'e', 'r', 's', 0x91, 0x02})
	f.Add([]byte{0x81, 0xc0, 0x90})
	f.Fuzz(func(t *testing.T, body []byte) {
		if CheckMsgpack(body, MaxMsgpackDepth) != nil {
			return
		}
		for _, ty := range []reflect.Type{reflect.TypeFor[budgetReply](), reflect.TypeFor[budgetMember](), reflect.TypeFor[map[string][]ID](), interfaceType, reflect.TypeFor[*[]*budgetMember]()} {
			decodeCost(body, ty, decodeBudget(len(body)))
		}
		reg.DecodeMessage("test.budgetMember", body)
		reg.DecodeMessage("test.budgetReply", body)
	})
}
