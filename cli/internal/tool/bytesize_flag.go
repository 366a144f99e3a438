package tool

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// byteSize is a flag.Value for a memory size: a number of bytes, with an
// optional unit — B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB
// (powers of 1024), case-insensitive, e.g. 4GiB, 500MB, 1.5GiB — or 0 for
// none. It stores the size in *n.
type byteSize struct{ n *int64 }

var byteUnits = []struct {
	suffix string
	scale  float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"b", 1},
}

func (v byteSize) String() string {
	if v.n == nil || *v.n == 0 {
		return "0"
	}
	return formatBytes(*v.n)
}

// formatBytes renders n with the largest binary unit that divides it.
func formatBytes(n int64) string {
	for _, u := range []struct {
		s string
		b int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n%u.b == 0 {
			return strconv.FormatInt(n/u.b, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

func (v byteSize) Set(s string) error {
	n, err := parseByteSize(s)
	if err != nil {
		return err
	}
	*v.n = n
	return nil
}

// parseByteSize parses a size as byteSize documents it.
func parseByteSize(s string) (int64, error) {
	t, scale := cutByteUnit(strings.ToLower(strings.TrimSpace(s)))
	if i, err := strconv.ParseInt(t, 10, 64); err == nil {
		return exactByteSize(s, i, int64(scale))
	}
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("want a size such as 4GiB, 500MB or 1073741824")
	}
	x *= scale
	if x < 0 || x >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q out of range (0 to 8EiB)", s)
	}
	return int64(x), nil
}

// cutByteUnit splits a lower-case size into its number and its unit's
// scale (1 without a unit).
func cutByteUnit(t string) (string, float64) {
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			return strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.scale
		}
	}
	return t, 1.0
}

// exactByteSize is i units of k bytes, the size s gives as an integer,
// computed exactly (a float64 cannot hold every int64).
func exactByteSize(s string, i, k int64) (int64, error) {
	if i < 0 || (i > 0 && k > math.MaxInt64/i) {
		return 0, fmt.Errorf("size %q out of range (0 to 8EiB)", s)
	}
	return i * k, nil
}
