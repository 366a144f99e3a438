package report_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/report"
)

// endless repeats its pattern forever and counts the bytes read from it.
type endless struct {
	head    string
	pattern []byte
	read    int64
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	if e.read == 0 && e.head != "" {
		n = copy(p, e.head)
	}
	for n < len(p) {
		n += copy(p[n:], e.pattern)
	}
	e.read += int64(n)
	return n, nil
}

// TestReadDocumentRejectsEndlessInput: an endless stream of zeros (what
// /dev/zero gives) or an endless JSON array is refused from its first
// bytes; an endless JSON object at the byte limit. None reads much past
// the limit.
func TestReadDocumentRejectsEndlessInput(t *testing.T) {
	lim := report.Limits{Bytes: 1 << 20}
	for _, c := range []struct {
		name string
		src  *endless
		want error
		max  int64
	}{
		{"zeros", &endless{pattern: []byte{0}}, report.ErrMalformed, 1 << 16},
		{"array", &endless{head: "[", pattern: []byte("0,")}, report.ErrMalformed, 1 << 16},
		{"object", &endless{head: `{"format":"`, pattern: []byte("x")}, report.ErrTooLarge, 2 << 20},
	} {
		_, err := report.ReadDocument(c.src, lim)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if c.src.read > c.max {
			t.Errorf("%s: read %d bytes, want at most %d", c.name, c.src.read, c.max)
		}
		if err != nil && len(err.Error()) > 400 {
			t.Errorf("%s: an error of %d bytes: %.300s", c.name, len(err.Error()), err)
		}
	}
}

// TestReadDocumentBoundsValues: a small file of many tiny values (which
// would decode into many times its size) is refused before decoding.
func TestReadDocumentBoundsValues(t *testing.T) {
	doc := `{"report":{"path":[` + strings.Repeat("{},", 5000) + `{}]}}`
	_, err := report.ReadPrediction(strings.NewReader(doc), report.Limits{Values: 1000})
	if !errors.Is(err, report.ErrTooLarge) {
		t.Fatalf("%v, want ErrTooLarge", err)
	}
	// Commas and brackets inside strings are not values.
	if _, err := report.ReadDocument(strings.NewReader(`{"a":"`+strings.Repeat(`,[{\",`, 5000)+`"}`), report.Limits{Values: 10}); err != nil {
		t.Fatalf("strings counted as values: %v", err)
	}
	if _, err := report.ReadDocument(strings.NewReader(`{}`), report.Limits{Bytes: -1}); err == nil {
		t.Fatal("negative limits accepted")
	}
}

// TestReadPredictionDistrustsSizes: the counts a model would allocate by
// are bounded, and an error quotes at most a short prefix of the input.
func TestReadPredictionDistrustsSizes(t *testing.T) {
	huge := strings.Repeat("A", 1<<20)
	for _, c := range []struct {
		name, doc string
		want      error
	}{
		{"nodes", `{"format":"crystalball-prediction/1","nodes":100000000}`, report.ErrTooLarge},
		{"negative nodes", `{"format":"crystalball-prediction/1","nodes":-1}`, report.ErrTooLarge},
		{"resets", `{"format":"crystalball-prediction/1","resets":1000000}`, report.ErrTooLarge},
		{"refusals", `{"format":"crystalball-prediction/1","refusals":1000000}`, report.ErrTooLarge},
		{"negative refusals", `{"format":"crystalball-prediction/1","refusals":-1}`, report.ErrTooLarge},
		{"format", `{"format":"` + huge + `"}`, report.ErrFormat},
		{"service", `{"format":"crystalball-prediction/1","service":"` + huge + `"}`, report.ErrTooLarge},
		{"number", `{"format":"crystalball-prediction/1","nodes":1` + strings.Repeat("0", 1<<20) + `}`, report.ErrMalformed},
		{"time", `{"format":"crystalball-prediction/1","snapshot":{"at":"` + huge + `"}}`, report.ErrMalformed},
		{"step type", `{"format":"crystalball-prediction/1","report":{"path":[{"type":"` + huge + `"}]}}`, report.ErrTooLarge},
		{"critical step", `{"format":"crystalball-prediction/1","liveness":{"critical_step":3}}`, report.ErrMalformed},
		{"snapshot format", `{"format":"crystalball-prediction/1","snapshot":{"format":"` + huge + `"}}`, report.ErrFormat},
	} {
		_, err := report.ReadPrediction(strings.NewReader(c.doc), report.Limits{})
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %.300v, want %v", c.name, err, c.want)
			continue
		}
		if len(err.Error()) > 300 {
			t.Errorf("%s: an error of %d bytes: %.300s", c.name, len(err.Error()), err)
		}
	}
}

// TestReadSnapshotChecksFormatAndMembers: a snapshot document needs its
// format and at most MaxNodes members.
func TestReadSnapshotChecksFormatAndMembers(t *testing.T) {
	if _, err := report.ReadSnapshot(strings.NewReader(`{"format":"crystalball-snapshot/1","gatherer":1,"nodes":[{"id":1}]}`), report.Limits{}); err != nil {
		t.Fatal(err)
	}
	if _, err := report.ReadSnapshot(strings.NewReader(`{"gatherer":1}`), report.Limits{}); !errors.Is(err, report.ErrFormat) {
		t.Fatalf("no format: %v", err)
	}
	var b bytes.Buffer
	b.WriteString(`{"format":"crystalball-snapshot/1","nodes":[{}`)
	for range report.MaxNodes {
		b.WriteString(",{}")
	}
	b.WriteString("]}")
	if _, err := report.ReadSnapshot(&b, report.Limits{}); !errors.Is(err, report.ErrTooLarge) {
		t.Fatalf("%d members: %v", report.MaxNodes+1, err)
	}
}

func TestQuoteCutsLongInput(t *testing.T) {
	if got := report.Quote("abc"); got != `"abc"` {
		t.Errorf("Quote(abc) = %s", got)
	}
	long := strings.Repeat("é", 100)
	got := report.Quote(long)
	if !strings.HasSuffix(got, fmt.Sprintf("(%d bytes)", len(long))) || len(got) > report.QuoteBytes+32 || strings.Contains(got, `\x`) {
		t.Errorf("Quote(long) = %s", got)
	}
}

// readerFuzz is the body of the reader fuzz targets: any input, within a
// small limit, is a value or an error wrapping the package's sentinels, and
// an error is short.
func readerFuzz[T any](t *testing.T, b []byte, read func(io.Reader, report.Limits) (T, error)) {
	_, err := read(bytes.NewReader(b), report.Limits{Bytes: 1 << 16, Values: 1 << 12})
	if err == nil {
		return
	}
	if !errors.Is(err, report.ErrMalformed) && !errors.Is(err, report.ErrTooLarge) && !errors.Is(err, report.ErrFormat) {
		t.Fatalf("an error wrapping no sentinel: %v", err)
	}
	if len(err.Error()) > 400 {
		t.Fatalf("an error of %d bytes: %.400s", len(err.Error()), err)
	}
}

var readerSeeds = []string{
	`{"format":"crystalball-prediction/1","nodes":5,"report":{"path":[{"kind":"timer","node":1,"timer":"probe"}]},` +
		`"liveness":{"critical_step":1},"snapshot":{"format":"crystalball-snapshot/1","gatherer":1,"cn":1,` +
		`"nodes":[{"id":1,"cn":1,"checkpoint":"AA==","timers":[{"name":"t","at":"2026-01-01T00:00:00Z"}]}],` +
		`"channels":[{"from":1,"to":2,"messages":[{"type":"randtree.Probe","msgpack":"3f////8="}]}]}}`,
	`{"format":"crystalball-snapshot/1","gatherer":1,"members":[1,2],"nodes":[{"id":1}]}`,
	`{"format":"crystalball-prediction/1","nodes":100000000}`,
	`{"a":"\"[,{"}`,
	"\x00\x00",
	`[0,0,0]`,
	`{}`,
}

// FuzzReadPrediction feeds arbitrary bytes to ReadPrediction, as 'trace
// show' does.
func FuzzReadPrediction(f *testing.F) {
	for _, s := range readerSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { readerFuzz(t, b, report.ReadPrediction) })
}

// FuzzReadSnapshot feeds arbitrary bytes to ReadSnapshot, as a client of a
// node's GET /snapshot does.
func FuzzReadSnapshot(f *testing.F) {
	for _, s := range readerSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { readerFuzz(t, b, report.ReadSnapshot) })
}
