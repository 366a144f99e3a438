package experiments

import (
	"errors"
	"testing"
)

func TestPercentileNearestRank(t *testing.T) {
	values := []float64{15, 20, 35, 40, 50}
	for _, c := range []struct{ p, want float64 }{{0, 15}, {5, 15}, {30, 20}, {40, 20}, {50, 35}, {100, 50}} {
		got, err := Percentile(values, c.p)
		if err != nil || got != c.want {
			t.Errorf("Percentile(%v) = %v, %v; want %v", c.p, got, err, c.want)
		}
	}
	if _, err := Percentile(nil, 50); !errors.Is(err, errNoSeries) {
		t.Errorf("empty sample: %v", err)
	}
	if _, err := Percentile(values, 101); err == nil {
		t.Error("p = 101 accepted")
	}
}
