package tool

import "testing"

func TestParseRate(t *testing.T) {
	good := map[string]float64{"0": 0, "off": 0, "1/m": 1, "60/h": 1, "0.5/s": 30, "2/min": 2}
	for in, want := range good {
		if got, err := parseRate(in); err != nil || got != want {
			t.Errorf("parseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"1", "x/m", "-1/m", "1/d", "NaN/m", "Inf/s", "1/"} {
		if _, err := parseRate(in); err == nil {
			t.Errorf("parseRate(%q) accepted", in)
		}
	}
}
