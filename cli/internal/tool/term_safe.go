package tool

import (
	"fmt"
	"io"
	"unicode"
	"unicode/utf8"
)

// termSafe is the writer trace show and trace debug print through: a
// report's text (a property's error, a state's strings, a message's
// fields) is whatever its writer put there, and a control character in
// it — ESC starting a terminal escape sequence, or an 8-bit CSI — would
// drive the terminal of whoever reads the trace (the audit's report
// cleared the screen). Every control character but newline and tab is
// written as a visible \uXXXX escape, as JSON would write it, so --json
// output stays JSON; invalid UTF-8 bytes as \xXX. A rune split between
// two writes is held until the next.
type termSafe struct {
	w       io.Writer
	pending []byte
	buf     []byte
}

func newTermSafe(w io.Writer) *termSafe { return &termSafe{w: w} }

func (t *termSafe) Write(p []byte) (int, error) {
	in := p
	if len(t.pending) > 0 {
		in = append(t.pending, p...)
		t.pending = nil
	}
	t.buf = t.escape(t.buf[:0], in)
	if _, err := t.w.Write(t.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// escape appends in to out rune by rune, escaped (appendTermSafe); a
// rune incomplete at the end is held in t.pending for the next write.
func (t *termSafe) escape(out, in []byte) []byte {
	for len(in) > 0 {
		if !utf8.FullRune(in) {
			t.pending = append(t.pending[:0], in...)
			break
		}
		r, n := utf8.DecodeRune(in)
		out = appendTermSafe(out, in[:n], r)
		in = in[n:]
	}
	return out
}

// appendTermSafe appends the rune r, encoded as raw, to out: an invalid
// byte as \xXX, a control character (but newline and tab) as \uXXXX,
// anything else as it is.
func appendTermSafe(out, raw []byte, r rune) []byte {
	switch {
	case r == utf8.RuneError && len(raw) == 1:
		return fmt.Appendf(out, `\x%02x`, raw[0])
	case termEscapesControl(r):
		return fmt.Appendf(out, `\u%04x`, r)
	}
	return append(out, raw...)
}

// termEscapesControl reports whether r is a control character termSafe
// escapes: all but newline and tab.
func termEscapesControl(r rune) bool {
	return unicode.IsControl(r) && r != '\n' && r != '\t'
}

// Flush writes a rune left incomplete by the last write, escaped.
func (t *termSafe) Flush() error {
	if len(t.pending) == 0 {
		return nil
	}
	var out []byte
	for _, b := range t.pending {
		out = fmt.Appendf(out, `\x%02x`, b)
	}
	t.pending = nil
	_, err := t.w.Write(out)
	return err
}
