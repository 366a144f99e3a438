package steering

import (
	"reflect"
	"testing"

	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// DefaultConfig is what New makes of a Config with only its Spec set
// (apart from the Spec and the properties taken from it).
func TestDefaultConfigIsWhatZeroMeans(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	got, err := Config{Spec: spec}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{Spec: spec}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Properties()) != 4 || len(c.LivenessProperties()) != 5 {
		t.Fatalf("safety %v, liveness %v: want RandTree's four safety and five liveness properties", c.Properties(), c.LivenessProperties())
	}
	got.Spec, got.Properties = DefaultConfig().Spec, nil // funcs do not compare
	want := DefaultConfig()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("zero config becomes %+v, DefaultConfig is %+v", got, want)
	}
}
