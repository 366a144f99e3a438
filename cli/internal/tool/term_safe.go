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
	out := t.buf[:0]
	for len(in) > 0 {
		c := in[0]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				out = fmt.Appendf(out, `\u%04x`, c)
			} else {
				out = append(out, c)
			}
			in = in[1:]
			continue
		}
		if !utf8.FullRune(in) {
			t.pending = append(t.pending[:0], in...)
			break
		}
		r, n := utf8.DecodeRune(in)
		switch {
		case r == utf8.RuneError && n == 1:
			out = fmt.Appendf(out, `\x%02x`, in[0])
		case unicode.IsControl(r):
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, in[:n]...)
		}
		in = in[n:]
	}
	t.buf = out
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
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
