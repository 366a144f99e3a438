package snapshot

import (
	"reflect"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
)

// DefaultConfig is what New makes of a Config with only its Registry set.
func TestDefaultConfigIsWhatZeroMeans(t *testing.T) {
	reg, err := node.NewRegistry(Messages()...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Config{Registry: reg}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	got.Registry = nil
	if want := DefaultConfig(); !reflect.DeepEqual(got, want) {
		t.Fatalf("zero config becomes %+v, DefaultConfig is %+v", got, want)
	}
}
