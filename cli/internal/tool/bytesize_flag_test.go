package tool

import "testing"

func TestParseByteSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"0", 0}, {"1024", 1024}, {"4GiB", 4 << 30}, {"4gib", 4 << 30}, {"1.5GiB", 3 << 29},
		{"500MB", 500e6}, {"2 KiB", 2048}, {"7B", 7}, {"1TB", 1e12},
	} {
		got, err := parseByteSize(c.in)
		if err != nil || got != c.want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "lots", "-1", "-1GiB", "GiB", "1e300", "NaN", "Inf", "4 GiBs", "9EiB", "1e19"} {
		if n, err := parseByteSize(bad); err == nil {
			t.Errorf("parseByteSize(%q) = %d, want an error", bad, n)
		}
	}
	if s := (byteSize{n: new(int64)}).String(); s != "0" {
		t.Errorf("zero renders %q", s)
	}
	for _, n := range []int64{4 << 30, 1536 << 20, 1000} {
		if got, err := parseByteSize(formatBytes(n)); err != nil || got != n {
			t.Errorf("round trip of %d via %q: %d, %v", n, formatBytes(n), got, err)
		}
	}
}

// FuzzParseByteSize: any input gives a size in range or an error, never a
// panic, and a size's rendering parses back to it.
func FuzzParseByteSize(f *testing.F) {
	for _, s := range []string{"4GiB", "500MB", "0", "1.5e3kb", "-3", "9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseByteSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("parseByteSize(%q) = %d", s, n)
		}
		if back, err := parseByteSize(formatBytes(n)); err != nil || back != n {
			t.Fatalf("%d renders %q, which parses to %d, %v", n, formatBytes(n), back, err)
		}
	})
}
