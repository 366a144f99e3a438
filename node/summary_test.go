package node_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// leaseState is a service state without a String method, the shape the
// issue's user wrote: an embedded base, a nested struct, a map, an ID.
type leaseState struct {
	node.NopHandlers
	Lease   leaseInfo
	Granted bool
	Epoch   int
	Queue   []node.ID
	Waiting map[node.ID]bool
	Holder  node.ID
	Renew   time.Duration

	opts leaseOpts
}

type leaseInfo struct {
	Holder node.ID
	Term   int
	Valid  bool
}

type leaseOpts struct {
	TTL   time.Duration
	Owner node.ID
}

func TestSummaryDerivesALineFromTheExportedFields(t *testing.T) {
	s := &leaseState{Lease: leaseInfo{Holder: 3, Term: 6, Valid: true}, Granted: true, Epoch: 2,
		Queue: []node.ID{4, 5, 6, 7, 8, 9}, Waiting: map[node.ID]bool{}, Renew: 1500 * time.Millisecond, opts: leaseOpts{TTL: time.Second}}
	got := node.Summary(s)
	want := "Lease={Holder=n3 Term=6 Valid=true} Granted=true Epoch=2 Queue=[n4 n5 n6 n7 …+2] Waiting=map[] Renew=1.5s"
	if got != want {
		t.Fatalf("Summary =\n%s\nwant\n%s", got, want)
	}
	if got := node.Summary(&leaseState{}); got != "(every exported field zero)" {
		t.Errorf("the zero state: %q", got)
	}
}

type named struct{ leaseState }

func (named) String() string { return "holder n3\nterm 6" }

func TestSummaryPrefersStringAndStaysBounded(t *testing.T) {
	if got := node.Summary(named{}); got != `holder n3\nterm 6` {
		t.Errorf("a String method: %q", got)
	}
	big := &leaseState{Waiting: map[node.ID]bool{}}
	for i := range 1000 {
		big.Waiting[node.ID(i+1)] = true
	}
	big.Queue = make([]node.ID, 1000)
	if got := node.Summary(big); len(got) > node.MaxSummaryBytes || strings.Contains(got, "\n") {
		t.Errorf("a large state: %d bytes: %q", len(got), got)
	}
}

// Fields renders unexported fields too, with their types' String methods:
// an options struct's durations as durations, not nanoseconds.
func TestFieldsRenderDurationsInUnexportedFields(t *testing.T) {
	s := &leaseState{opts: leaseOpts{TTL: 2 * time.Second, Owner: 1}}
	var opts string
	for _, f := range node.Fields(s) {
		if f.Name == "opts" {
			opts = f.Value
		}
	}
	if opts != "{TTL:2s Owner:n1}" {
		t.Fatalf("opts = %q, want {TTL:2s Owner:n1}", opts)
	}
	if got := node.FormatValue(reflect.ValueOf(map[node.ID][]int{2: {1}, 1: nil})); got != "map[n1:[] n2:[1]]" {
		t.Errorf("a map: %q", got)
	}
}
