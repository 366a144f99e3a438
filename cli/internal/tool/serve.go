package tool

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/seed6eee2ec7/crystalball/report"
	"github.com/seed6eee2ec7/crystalball/webview"
)

// DefaultServeListen is where 'serve' listens unless --listen says
// otherwise: loopback only, since the view shows service states.
const DefaultServeListen = "127.0.0.1:8070"

// maxServeViolations bounds the violations of one check --json output
// that 'serve' replays (each is a document of its own).
const maxServeViolations = 32

// runServe runs 'crystalball serve [--listen ADDR] PATH...': it loads
// every file (a directory: its *.json files) and serves the web view
// until interrupted.
func runServe(cat *catalog, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", DefaultServeListen, "the address to serve the web view on (host:port; port 0 picks a free one)")
	setUsage(fs, "serve [--listen ADDR] PATH...", "Serve a web view of reports in a browser: PATH is the output of 'check --json' or 'emulate --json', a prediction report of --reports, an emulation trace of 'emulate --trace', an experiment's --json result, or a directory of such files (its *.json). Traces open in a stepper (node states, the critical step, the nearest live path, the event graph); experiments' results are plotted.")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() == 0 {
		return usagef("no PATH (a report, a --json output, an emulation trace or a directory of them)")
	}
	h, n, warnings, err := serveHandlerWarn(cat, fs.Args())
	for _, w := range warnings {
		fmt.Fprintln(stderr, "serve: "+w)
	}
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return usagef("--listen %s: %v", *listen, err)
	}
	fmt.Fprintf(stdout, "serving %d document(s) on http://%s/ (interrupt to stop)\n", n, ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveUntil(ctx, ln, h)
}

// serveUntil serves h on ln until ctx ends, then shuts the server down.
func serveUntil(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return fmt.Errorf("serving: %w", err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}

// serveHandler loads paths and returns the web view of them and the
// number of documents (serveHandlerWarn without its warnings).
func serveHandler(cat *catalog, paths []string) (http.Handler, int, error) {
	h, n, _, err := serveHandlerWarn(cat, paths)
	return h, n, err
}

// serveHandlerWarn loads paths and returns the web view of them, the
// number of documents, and a warning per file of a directory it left
// out. A file named itself must load, or the command fails; a file of a
// directory that does not load is an error row saying why (errorDocument)
// — one damaged report among a thousand does not hide the rest —, and
// one that leads outside the directory is left out unread, with a
// warning.
func serveHandlerWarn(cat *catalog, paths []string) (http.Handler, int, []string, error) {
	files, warnings, err := serveFiles(paths)
	if err != nil {
		return nil, 0, nil, err
	}
	docs, sources, err := loadServeDocuments(cat, files)
	if err != nil {
		return nil, 0, nil, err
	}
	if len(docs) == 0 && len(warnings) > 0 {
		return nil, 0, warnings, usagef("no file of %v loads (%d left out)", paths, len(warnings))
	}
	linkServedDocuments(docs, sources)
	h, err := webview.Handler(docs)
	if err != nil {
		return nil, 0, nil, usagef("%v", err)
	}
	return h, len(docs), warnings, nil
}

// linkServedDocuments resolves the links between the documents (docs[i]
// read from sources[i]): resolveReportLinks.
func linkServedDocuments(docs []webview.Document, sources []string) {
	served := make([]servedDoc, len(docs))
	for i := range docs {
		served[i] = servedDoc{doc: &docs[i], file: sources[i]}
	}
	resolveReportLinks(served)
}

// loadServeDocuments loads the documents of files, in order, and the
// file of each document.
func loadServeDocuments(cat *catalog, files []serveFile) (docs []webview.Document, sources []string, err error) {
	for _, f := range files {
		d, err := serveFileDocuments(cat, f)
		if err != nil {
			return nil, nil, err
		}
		docs = append(docs, d...)
		for range d {
			sources = append(sources, f.path)
		}
	}
	return docs, sources, nil
}

// serveFileDocuments loads the documents of f: a file of a directory
// that does not load is an error row; a file named itself must load.
func serveFileDocuments(cat *catalog, f serveFile) ([]webview.Document, error) {
	d, err := serveDocuments(cat, f.path)
	if err == nil {
		return d, nil
	}
	if f.dir == "" {
		return nil, err
	}
	return []webview.Document{errorDocument(f.path, err)}, nil
}

// serveFile is a file to serve; dir is the directory it was found in ("":
// named on the command line).
type serveFile struct{ path, dir string }

// serveFiles expands paths: a directory is its *.json files, sorted,
// except those that lead outside it (a symbolic link to a file elsewhere:
// served, its error would quote the first bytes of whatever it names),
// each left out with a warning; a path that does not exist, or a
// directory without a report, is a usage error.
func serveFiles(paths []string) ([]serveFile, []string, error) {
	var out []serveFile
	var warnings []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, nil, usagef("%v", err)
		}
		if !st.IsDir() {
			out = append(out, serveFile{path: p})
			continue
		}
		files, left, err := serveDirFiles(p)
		if err != nil {
			return nil, nil, err
		}
		out, warnings = append(out, files...), append(warnings, left...)
	}
	if len(out) > webview.MaxDocuments {
		return nil, nil, usagef("%d files, at most %d", len(out), webview.MaxDocuments)
	}
	return out, warnings, nil
}

// serveDirFiles are the *.json files of directory dir, sorted, and a
// warning for each one left out as it leads outside dir.
func serveDirFiles(dir string) (files []serveFile, warnings []string, err error) {
	m, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, nil, usagef("%s: %v", dir, err)
	}
	if len(m) == 0 {
		return nil, nil, usagef("%s: a directory without a *.json file", dir)
	}
	slices.Sort(m)
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, nil, usagef("%s: %v", dir, err)
	}
	for _, f := range m {
		if why := outside(root, f); why != "" {
			warnings = append(warnings, fmt.Sprintf("%s: left out: %s", f, why))
			continue
		}
		files = append(files, serveFile{path: f, dir: dir})
	}
	return files, warnings, nil
}

// outside says why file, found in the directory whose real path is root,
// is not a regular file within it ("" if it is).
func outside(root, file string) string {
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		return "a link that leads nowhere"
	}
	if rel, err := filepath.Rel(root, real); err != nil || relClimbsOut(rel) {
		return "a link to a file outside the directory"
	}
	if st, err := os.Stat(real); err != nil || !st.Mode().IsRegular() {
		return "not a regular file"
	}
	return ""
}

// relClimbsOut reports whether the relative path rel climbs out of its
// directory ("..", or "../" and more).
func relClimbsOut(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// serveDocuments reads one file as the web view's documents: a check
// output is one per replayable violation, any other file one.
func serveDocuments(cat *catalog, file string) ([]webview.Document, error) {
	if isEmulationTrace(file) {
		tl, err := loadTimeline(cat, file, 1)
		if err != nil {
			return nil, err
		}
		return []webview.Document{traceDocument(file, "emulation trace", tl)}, nil
	}
	b, format, err := readFormatted(file)
	if err != nil {
		return nil, err
	}
	return formattedDocuments(cat, file, format, b)
}

// formattedDocuments reads the JSON document b of file, of the given
// format, as the web view's documents.
func formattedDocuments(cat *catalog, file, format string, b []byte) ([]webview.Document, error) {
	switch f := format; {
	case f == report.PredictionFormat:
		return predictionDocument(cat, file, b)
	case f == checkFormat || f == "":
		return checkDocuments(cat, file, b)
	case f == emulateFormat:
		return emulateDocument(file, b)
	case strings.HasPrefix(f, "crystalball-experiment-"):
		return experimentDocument(file, f, b)
	}
	return nil, usagef("%s: unknown report format %s (serve reads %q, %q, %q, experiments' --json results and emulation traces)",
		file, report.Quote(format), checkFormat, emulateFormat, report.PredictionFormat)
}

// checkDocuments replays each replayable violation of a check --json
// output (the first maxServeViolations), a document each.
func checkDocuments(cat *catalog, file string, b []byte) ([]webview.Document, error) {
	co, _, err := readCheckOutput(file, b, 1)
	if err != nil {
		return nil, err
	}
	n := max(len(co.Reports), 1) // a walk check's suspect is its one report
	var docs []webview.Document
	for which := 1; which <= min(n, maxServeViolations); which++ {
		tl, err := checkTimeline(cat, file, b, which)
		if err != nil {
			return nil, err
		}
		name := file
		if n > 1 {
			name = fmt.Sprintf("%s (violation %d of %d)", file, which, n)
		}
		d := traceDocument(name, checkFormat, tl)
		d.Predictions = []webview.Prediction{{Property: tl.rep.Property, Kind: tl.rep.Kind, Depth: tl.rep.Depth, Error: tl.rep.Error, At: "found by check (" + co.Strategy + ")"}}
		docs = append(docs, d)
	}
	return docs, nil
}

// predictionDocument replays a prediction report.
func predictionDocument(cat *catalog, file string, b []byte) ([]webview.Document, error) {
	tl, err := predictionTimeline(cat, file, b)
	if err != nil {
		return nil, err
	}
	d := traceDocument(file, report.PredictionFormat, tl)
	var doc report.Prediction
	if err := report.Unmarshal(b, &doc); err == nil { // predictionTimeline read it already
		d.Predictions = []webview.Prediction{{Property: doc.Report.Property, Kind: doc.Report.Kind, Node: doc.Node.String(),
			Depth: doc.Report.Depth, Error: doc.Report.Error, At: fmt.Sprintf("round at cut %d, mode %s", doc.Snapshot.CN, doc.Mode)}}
	}
	return []webview.Document{d}, nil
}

// emulateDocument lists an emulated run's predictions.
func emulateDocument(file string, b []byte) ([]webview.Document, error) {
	var out EmulateOutput
	if err := report.Unmarshal(b, &out); err != nil {
		return nil, usagef("%s: not the output of 'crystalball emulate --json': %v", file, err)
	}
	d := webview.Document{Name: file, Format: emulateFormat, Head: []string{
		fmt.Sprintf("%s (%s), %d nodes, %s, churn %g/min, seed %d", out.Service, out.Options, out.Nodes, out.Duration, out.ChurnPerMinute, out.Seed),
		fmt.Sprintf("%d distinct predictions by %d predictor(s)", len(out.Predictions), len(out.Predictors)),
	}}
	for _, p := range out.Predictions {
		d.Predictions = append(d.Predictions, webview.Prediction{Property: p.Property, Kind: p.Kind, Node: p.Node.String(), Depth: p.Depth,
			Error: p.Error, At: fmt.Sprintf("%.1f s into the run", p.FirstPredictedS), Outcome: predictionOutcome(p), Report: p.Report})
	}
	return []webview.Document{d}, nil
}

// predictionOutcome says what the run did after a prediction.
func predictionOutcome(p predictionOut) string {
	switch {
	case p.Happened != nil:
		return fmt.Sprintf("happened %.1f s later (%s)", p.Happened.AfterS, p.Happened.Node)
	case p.ViolatedBefore:
		return "never happened after it (violated before)"
	}
	return "never happened"
}

// experimentDocument plots an experiment's --json result.
func experimentDocument(file, format string, b []byte) ([]webview.Document, error) {
	figs, err := webview.Figures(b, webview.WriteCDFSVGOf)
	if err != nil {
		return nil, usagef("%s: %v", file, err)
	}
	var head struct {
		Headline *webview.Headline `json:"headline"`
	}
	_ = report.Unmarshal(b, &head) // Figures read it already: it is a JSON object
	return []webview.Document{{Name: file, Format: format, Headline: head.Headline, Head: []string{fmt.Sprintf("%d figure(s) of the experiment's --json result", len(figs))}, Figures: figs}}, nil
}
