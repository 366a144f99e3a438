package status

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/seed6eee2ec7/crystalball/live"
	"github.com/seed6eee2ec7/crystalball/report"
)

// fakeReports is a report writer with one recent file.
type fakeReports struct{}

func (fakeReports) Stats() report.WriterStats {
	return report.WriterStats{Written: 1, Files: 1, Recent: []report.ReportFile{{Name: "prediction-n3-cut7-1.json", Property: "P", Cut: 7}}}
}

func (fakeReports) ReadRecent(name string) ([]byte, error) {
	if name != "prediction-n3-cut7-1.json" {
		return nil, fmt.Errorf("%w: %q", report.ErrNotRecent, name)
	}
	return []byte(`{"format":"crystalball-prediction/1"}`), nil
}

// /status lists the writer's newest reports and /reports/NAME serves
// those, nothing else: a node's /ui links its predictions to them.
func TestStatusListsAndServesRecentReports(t *testing.T) {
	s := newTestServer(t, Config{Runtime: &fakeRuntime{st: live.Status{ID: 3}}, Reports: fakeReports{}})
	h := s.Handler()
	var doc StatusDoc
	if err := json.Unmarshal(do(t, h, http.MethodGet, "/status").Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Reports == nil || doc.Reports.Written != 1 || len(doc.Reports.Recent) != 1 || doc.Reports.Recent[0].Cut != 7 {
		t.Fatalf("reports %+v", doc.Reports)
	}
	if w := do(t, h, http.MethodGet, "/reports/prediction-n3-cut7-1.json"); w.Code != http.StatusOK || w.Body.String() != `{"format":"crystalball-prediction/1"}` {
		t.Errorf("a recent report: %d %s", w.Code, w.Body)
	}
	if w := do(t, h, http.MethodGet, "/reports/other.json"); w.Code != http.StatusNotFound {
		t.Errorf("another file: %d", w.Code)
	}
	none := newTestServer(t, Config{Runtime: &fakeRuntime{}})
	if w := do(t, none.Handler(), http.MethodGet, "/reports/x.json"); w.Code != http.StatusNotFound {
		t.Errorf("no writer: %d", w.Code)
	}
}
