package status

import (
	"errors"
	"net/http"

	"github.com/seed6eee2ec7/crystalball/report"
)

// ReportsDoc is the "reports" object of GET /status: what the node's
// report writer (--reports) wrote, and its newest files, which GET
// /reports/{name} serves.
type ReportsDoc struct {
	Written uint64              `json:"written"`
	Failed  uint64              `json:"failed"`
	Dropped uint64              `json:"dropped"`
	Files   int                 `json:"files"`
	Bytes   int64               `json:"bytes"`
	Recent  []report.ReportFile `json:"recent"`
}

// RecentReports is the optional side of a Reports that reads back its
// newest files (a *report.Writer is one): with it the server serves GET
// /reports/{name} for those names and nothing else.
type RecentReports interface {
	ReadRecent(name string) ([]byte, error)
}

// reportsDoc is the status's reports object (nil without a writer).
func (s *Server) reportsDoc() *ReportsDoc {
	if s.cfg.Reports == nil {
		return nil
	}
	st := s.cfg.Reports.Stats()
	doc := &ReportsDoc{Written: st.Written, Failed: st.Failed, Dropped: st.Dropped, Files: st.Files, Bytes: st.Bytes, Recent: st.Recent}
	if doc.Recent == nil {
		doc.Recent = []report.ReportFile{}
	}
	return doc
}

// getReport serves one of the writer's recent report files.
func (s *Server) getReport(w http.ResponseWriter, r *http.Request) {
	rr, ok := s.cfg.Reports.(RecentReports)
	if !ok {
		writeError(w, http.StatusNotFound, "no report writer (--reports)")
		return
	}
	b, err := rr.ReadRecent(r.PathValue("name"))
	switch {
	case errors.Is(err, report.ErrNotRecent):
		writeError(w, http.StatusNotFound, err.Error())
	case err != nil:
		writeError(w, http.StatusInternalServerError, err.Error())
	default:
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}
}
