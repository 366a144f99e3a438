package node

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxShownString is the length Clip is given for a peer's string shown in
// a log line, a status page or an error: enough for any name or reason
// the protocols send, far below what a hostile peer can.
const MaxShownString = 256

// Clip returns s made safe to show: at most max bytes (cut at a rune
// boundary, "…" appended when cut), with invalid UTF-8 and control
// characters — a terminal's escape sequences among them — replaced by
// U+FFFD. Strings a peer or a file supplies go through it before they
// reach a log line, a status document or a terminal, so that a peer can
// neither grow them without bound nor drive the terminal of whoever reads
// them. Clip of a short printable string is the string itself.
func Clip(s string, max int) string {
	clean := len(s) <= max
	for i := 0; clean && i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= utf8.RuneSelf {
			clean = false
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) {
			r = utf8.RuneError
		}
		if b.Len()+utf8.RuneLen(r) > max {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}
