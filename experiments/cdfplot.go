package experiments

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// errNoSeries is what Percentile returns for an empty sample.
var errNoSeries = errors.New("experiments: percentile of an empty sample")

// Percentile returns the p-th percentile (0 ≤ p ≤ 100) of values by the
// nearest-rank method: the smallest value at or below which at least p%
// of the sample lies. values is not modified.
func Percentile(values []float64, p float64) (float64, error) {
	if len(values) == 0 {
		return 0, errNoSeries
	}
	if p < 0 || p > 100 || math.IsNaN(p) {
		return 0, fmt.Errorf("experiments: percentile %v outside 0..100", p)
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[max(rank-1, 0)], nil
}
