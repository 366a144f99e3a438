package webview

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
)

//go:embed assets
var assets embed.FS

// livePage is the live node's page, parsed once.
var livePage = template.Must(template.ParseFS(assets, "assets/live.html"))

// parsePages parses the document pages with link, which names a
// document's number (0: none).
func parsePages(link func(name string) int) (*template.Template, error) {
	return template.New("").Funcs(template.FuncMap{"link": link}).ParseFS(assets, "assets/index.html", "assets/doc.html")
}

// MaxDocuments bounds the documents one Handler serves.
const MaxDocuments = 10000

// server serves a fixed list of documents.
type server struct {
	docs []Document
	// pages are the templates with link bound to docs: a document's name
	// (cleaned as a path) to its number, 0 for none.
	pages *template.Template
}

// Handler returns the web view of docs: GET / lists them with their
// predictions, /doc/N (1-based) shows one — its head, its figures, with
// a Trace the stepper and the event graph (/doc/N/graph.svg), and with a
// History the client history (/doc/N/history.svg). The JSON
// the pages' JavaScript reads is under /api/doc/N/. (A live node's page is
// Live, which its status server mounts beside /status.) Handler fails on more than MaxDocuments or two
// documents of the same name; it keeps docs (the caller must not change
// them afterwards).
func Handler(docs []Document) (http.Handler, error) {
	if len(docs) > MaxDocuments {
		return nil, fmt.Errorf("webview: %d documents, at most %d", len(docs), MaxDocuments)
	}
	seen := make(map[string]bool, len(docs))
	for _, d := range docs {
		if seen[d.Name] {
			return nil, fmt.Errorf("webview: document %q given twice", d.Name)
		}
		seen[d.Name] = true
	}
	ids := make(map[string]int, len(docs))
	for i, d := range docs {
		ids[filepath.Clean(d.Name)] = i + 1
	}
	t, err := parsePages(func(name string) int { return ids[filepath.Clean(name)] })
	if err != nil {
		return nil, fmt.Errorf("webview: %w", err) // the embedded templates: a build error, caught by any test
	}
	s := &server{docs: docs, pages: t}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /doc/{id}", s.document)
	mux.HandleFunc("GET /doc/{id}/graph.svg", s.graph)
	mux.HandleFunc("GET /doc/{id}/history.svg", s.history)
	mux.HandleFunc("GET /api/doc/{id}/trace", s.traceInfo)
	mux.HandleFunc("GET /api/doc/{id}/state", s.state)
	mux.Handle("GET /static/", staticHandler())
	return mux, nil
}

// staticFiles are the embedded files served as they are (the templates
// are not).
var staticFiles = map[string]string{"app.js": "text/javascript; charset=utf-8", "style.css": "text/css; charset=utf-8"}

// staticHandler serves the embedded script and style sheet.
func staticHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/static/")
		ctype, ok := staticFiles[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		b, err := assets.ReadFile("assets/" + name)
		if err != nil {
			http.Error(w, "webview: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", ctype)
		w.Write(b)
	})
}

// Live returns the live node's status page: it polls GET status (relative
// to the page: the status server's /status that mounts it at /ui) and
// shows the node's neighbourhood, its steering rounds and interventions,
// and its snapshots, updating every two seconds.
func Live() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		render(w, livePage, "live.html", nil)
	})
}

// render executes template name of t into w; a failure is a 500.
func render(w http.ResponseWriter, t *template.Template, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := t.ExecuteTemplate(w, name, data); err != nil {
		http.Error(w, "webview: "+err.Error(), http.StatusInternalServerError)
	}
}

// indexEntry is one document as the index lists it.
type indexEntry struct {
	ID  int
	Doc *Document
}

func (s *server) index(w http.ResponseWriter, r *http.Request) {
	entries := make([]indexEntry, len(s.docs))
	for i := range s.docs {
		entries[i] = indexEntry{ID: i + 1, Doc: &s.docs[i]}
	}
	render(w, s.pages, "index.html", entries)
}

// docPage is what the document page's template gets.
type docPage struct {
	ID      int
	Doc     *Document
	Figures []template.HTML
}

func (s *server) document(w http.ResponseWriter, r *http.Request) {
	id, d, ok := s.lookup(w, r)
	if !ok {
		return
	}
	p := docPage{ID: id, Doc: d}
	for _, f := range d.Figures {
		p.Figures = append(p.Figures, template.HTML(f.SVG)) // drawn by this package or the caller's plotter, not by the file
	}
	render(w, s.pages, "doc.html", p)
}

// lookup resolves the {id} of a request, answering 404 when there is no
// such document.
func (s *server) lookup(w http.ResponseWriter, r *http.Request) (int, *Document, bool) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || id < 1 || id > len(s.docs) {
		http.Error(w, fmt.Sprintf("webview: no document %q (there are %d)", r.PathValue("id"), len(s.docs)), http.StatusNotFound)
		return 0, nil, false
	}
	return id, &s.docs[id-1], true
}

// lookupTrace is lookup for a document that must have a trace.
func (s *server) lookupTrace(w http.ResponseWriter, r *http.Request) (Trace, bool) {
	_, d, ok := s.lookup(w, r)
	if !ok {
		return nil, false
	}
	if d.Trace == nil {
		http.Error(w, fmt.Sprintf("webview: %s holds no replayable path", d.Name), http.StatusNotFound)
		return nil, false
	}
	return d.Trace, true
}

func (s *server) traceInfo(w http.ResponseWriter, r *http.Request) {
	if t, ok := s.lookupTrace(w, r); ok {
		writeJSON(w, t.Info())
	}
}

func (s *server) state(w http.ResponseWriter, r *http.Request) {
	t, ok := s.lookupTrace(w, r)
	if !ok {
		return
	}
	path := r.URL.Query().Get("path")
	if path == "" {
		path = PathDead
	}
	step, err := strconv.Atoi(r.URL.Query().Get("step"))
	if err != nil || (path != PathDead && path != PathLive) {
		http.Error(w, "webview: want ?path=dead|live&step=N", http.StatusBadRequest)
		return
	}
	st, err := t.State(path, step)
	switch {
	case errors.Is(err, ErrNotFound):
		http.Error(w, err.Error(), http.StatusNotFound)
	case err != nil:
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
	default:
		writeJSON(w, st)
	}
}

func (s *server) graph(w http.ResponseWriter, r *http.Request) {
	t, ok := s.lookupTrace(w, r)
	if !ok {
		return
	}
	info := t.Info()
	if info.GraphError != "" {
		http.Error(w, "webview: no event graph: "+info.GraphError, http.StatusUnprocessableEntity)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	WriteGraphSVG(w, info)
}

func (s *server) history(w http.ResponseWriter, r *http.Request) {
	_, d, ok := s.lookup(w, r)
	if !ok {
		return
	}
	if d.History == nil {
		http.Error(w, fmt.Sprintf("webview: %s holds no client history", d.Name), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	WriteHistorySVG(w, *d.History)
}

// writeJSON writes v as JSON; v is one of this package's types, which
// always encode.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
