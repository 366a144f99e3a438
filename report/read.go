package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Reader bounds. A report is a file a person or another program handed us,
// so a reader trusts none of its sizes: it stops reading past Limits.Bytes,
// refuses more JSON values than Limits.Values before decoding (so a file
// of tiny values cannot decode into many times its size) and refuses counts
// that would make the explorer allocate per unit (nodes, path steps, fault
// budgets) beyond what 'crystalball check' itself accepts.
const (
	// DefaultMaxBytes is Limits.Bytes's default: 64 MiB, far above any
	// report a node writes (a few hundred KiB for a 100-node snapshot).
	DefaultMaxBytes = 64 << 20
	// DefaultMaxValues is Limits.Values's default: JSON objects, arrays and
	// their elements counted before decoding.
	DefaultMaxValues = 1 << 20
	// MaxNodes bounds a report's node count and a snapshot's members: the
	// largest model 'crystalball check --nodes' builds.
	MaxNodes = 1 << 16
	// MaxPathSteps bounds a reported path (and a dead end's live path).
	MaxPathSteps = 1 << 16
	// MaxFaults bounds the resets, breaks and arrivals a report's model
	// holds: each multiplies the explorer's branching.
	MaxFaults = 1 << 10
	// MaxNameBytes bounds the strings a reader uses to look things up or
	// puts into an error (format, service, fix, mode, property, kinds).
	MaxNameBytes = 1 << 10
	// QuoteBytes is the most of a bad input an error quotes.
	QuoteBytes = 64
)

// ErrTooLarge is wrapped by the errors of a reader given a document beyond
// its Limits: too many bytes, JSON values, nodes, steps or too long a name.
var ErrTooLarge = errors.New("report: document too large")

// ErrMalformed is wrapped by the errors of a reader given bytes that are
// not a JSON document of the expected shape.
var ErrMalformed = errors.New("report: malformed document")

// Limits are the bounds a reader enforces. The zero value means the
// defaults (DefaultMaxBytes, DefaultMaxValues); negative fields are an
// error. Tests lower them to exercise the bounds with small inputs.
type Limits struct {
	// Bytes is the most bytes read; 0 means DefaultMaxBytes.
	Bytes int64
	// Values is the most JSON values (objects, arrays and their elements)
	// accepted before decoding; 0 means DefaultMaxValues.
	Values int
}

// resolve fills the defaults and rejects negative fields.
func (l Limits) resolve() (Limits, error) {
	if l.Bytes < 0 || l.Values < 0 {
		return l, fmt.Errorf("report: negative limits (bytes %d, values %d)", l.Bytes, l.Values)
	}
	if l.Bytes == 0 {
		l.Bytes = DefaultMaxBytes
	}
	if l.Values == 0 {
		l.Values = DefaultMaxValues
	}
	return l, nil
}

// Quote renders s for an error message: Go-quoted, and cut to its first
// QuoteBytes bytes (with the full length) when longer, so a hostile
// document cannot make an error as large as itself.
func Quote(s string) string {
	if len(s) <= QuoteBytes {
		return fmt.Sprintf("%q", s)
	}
	cut := QuoteBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:cut], len(s))
}

// ReadDocument reads one JSON object from r within lim: at most lim.Bytes
// bytes (ErrTooLarge beyond), starting with '{' after white space
// (ErrMalformed otherwise, found from the first bytes, so /dev/zero or a
// huge JSON array fail at once) and with at most lim.Values JSON values.
// It returns the document's bytes for json.Unmarshal.
func ReadDocument(r io.Reader, lim Limits) ([]byte, error) {
	lim, err := lim.resolve()
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(io.LimitReader(r, lim.Bytes+1))
	if err := expectObject(br); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(br)
	if err != nil {
		return nil, fmt.Errorf("report: reading: %w", err)
	}
	if int64(len(b)) > lim.Bytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrTooLarge, lim.Bytes)
	}
	if n := countValues(b, lim.Values); n > lim.Values {
		return nil, fmt.Errorf("%w: more than %d JSON values", ErrTooLarge, lim.Values)
	}
	return b, nil
}

// expectObject checks, without consuming it, that br's first byte after
// JSON white space opens an object.
func expectObject(br *bufio.Reader) error {
	for {
		c, err := br.ReadByte()
		if err == io.EOF {
			return fmt.Errorf("%w: empty, want a JSON object", ErrMalformed)
		}
		if err != nil {
			return fmt.Errorf("report: reading: %w", err)
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return br.UnreadByte()
		}
		head, _ := br.Peek(15) // enough to recognise what the file is
		return fmt.Errorf("%w: not a JSON object (starts with %s)", ErrMalformed, Quote(string(c)+string(head)))
	}
}

// countValues counts the JSON containers and elements of b outside strings
// (each '{', '[' and ','), stopping once past max.
func countValues(b []byte, max int) int {
	n, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[' || c == ',':
			if n++; n > max {
				return n
			}
		}
	}
	return n
}

// decode reads one document of r within lim into v.
func decode(r io.Reader, lim Limits, v any) error {
	b, err := ReadDocument(r, lim)
	if err != nil {
		return err
	}
	return Unmarshal(b, v)
}

// Unmarshal is json.Unmarshal for documents a reader got from ReadDocument:
// its error wraps ErrMalformed and quotes at most QuoteBytes of the input
// (a number literal or a time string can be as long as the file).
func Unmarshal(b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %s", ErrMalformed, jsonError(err))
	}
	return nil
}

// jsonError describes a decoding error without quoting the input (the
// syntax and type errors of encoding/json name positions and types only,
// but the text of any other error is cut).
func jsonError(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("%v (at byte %d)", se, se.Offset)
	case errors.As(err, &te):
		v := te.Value // "number 1e999…": the literal itself
		if len(v) > QuoteBytes {
			v = v[:QuoteBytes] + "…"
		}
		return fmt.Sprintf("%s.%s cannot hold a JSON %s (at byte %d)", te.Struct, te.Field, v, te.Offset)
	}
	s := err.Error()
	if len(s) > 4*QuoteBytes {
		return Quote(s)
	}
	return s
}
