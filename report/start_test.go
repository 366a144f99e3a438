package report_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/report"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// FuzzReadStart feeds arbitrary bytes to ReadStart, as 'check --from'
// does, and every document it accepts to Start.Model: a clean error
// wrapping a sentinel, or a model, never a panic.
func FuzzReadStart(f *testing.F) {
	for _, s := range readerSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"format":"crystalball-check/1"}`))
	spec := randtree.NewSpec(randtree.DefaultOptions())
	f.Fuzz(func(t *testing.T, b []byte) {
		readerFuzz(t, b, report.ReadStart)
		st, err := report.ReadStart(bytes.NewReader(b), report.Limits{Bytes: 1 << 16, Values: 1 << 12})
		if err != nil {
			return
		}
		m, err := st.Model(randtree.Name, spec, steering.SnapshotOptions{})
		if err == nil && m == nil {
			t.Fatal("no model and no error")
		}
		if err != nil && !errors.Is(err, report.ErrWrongService) && !errors.Is(err, report.ErrMalformed) {
			t.Fatalf("an error wrapping no sentinel: %v", err)
		}
	})
}

// TestReadStartRejects: a document of another format, or of another
// service, is a clear error naming both.
func TestReadStartRejects(t *testing.T) {
	_, err := report.ReadStart(strings.NewReader(`{"format":"crystalball-check/1"}`), report.Limits{})
	if !errors.Is(err, report.ErrFormat) || !strings.Contains(err.Error(), "crystalball-check/1") {
		t.Errorf("check output: %v, want ErrFormat naming its format", err)
	}
	spec := randtree.NewSpec(randtree.DefaultOptions())
	st := report.Start{Format: report.PredictionFormat, Service: "chord", Snapshot: report.Snapshot{Format: report.SnapshotFormat}}
	if _, err := st.Model(randtree.Name, spec, steering.SnapshotOptions{}); !errors.Is(err, report.ErrWrongService) || !strings.Contains(err.Error(), `"chord"`) {
		t.Errorf("a chord report for randtree: %v, want ErrWrongService naming chord", err)
	}
	st = report.Start{Format: report.SnapshotFormat, Snapshot: report.Snapshot{Format: report.SnapshotFormat,
		Properties: []report.PropertyResult{{Name: "RingConsistent"}}}}
	if _, err := st.Model(randtree.Name, spec, steering.SnapshotOptions{}); !errors.Is(err, report.ErrWrongService) || !strings.Contains(err.Error(), "RingConsistent") {
		t.Errorf("a snapshot of other properties: %v, want ErrWrongService naming them", err)
	}
}
