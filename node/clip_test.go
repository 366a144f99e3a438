package node

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"plain", 10, "plain"},
		{"\x1b[31mred\x1b[0m", 40, "\ufffd[31mred\ufffd[0m"},
		{"tab\tand\nnewline", 40, "tab\ufffdand\ufffdnewline"},
		{"bad\xffutf8", 40, "bad\ufffdutf8"},
		{strings.Repeat("a", 20), 10, strings.Repeat("a", 10) + "…"},
		{"éééééé", 10, "ééééé…"},
	} {
		if got := Clip(tc.in, tc.max); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

// FuzzClip: whatever the input, Clip's result is valid UTF-8 without
// control characters and at most max bytes plus the ellipsis.
func FuzzClip(f *testing.F) {
	f.Add("\x1b]0;title\x07", 8)
	f.Add(strings.Repeat("é", 100), 33)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 || max > 1<<16 {
			return
		}
		got := Clip(s, max)
		if !utf8.ValidString(got) || len(got) > max+len("…") {
			t.Fatalf("Clip(%q, %d) = %q", s, max, got)
		}
		for _, r := range got {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Fatalf("Clip(%q, %d) = %q keeps control character %U", s, max, got, r)
			}
		}
	})
}
