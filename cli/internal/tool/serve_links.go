package tool

import (
	"os"
	"path/filepath"

	"github.com/seed6eee2ec7/crystalball/webview"
)

// servedDoc is a document with the file it was read from.
type servedDoc struct {
	doc  *webview.Document
	file string
}

// resolveReportLinks points every prediction's Report at the served
// document of that file, whatever path spelling either was given in: an
// emulation's --json records its --reports paths as the run was given
// them (reports/prediction-001-….json, relative to where it ran), and
// serve may be handed the directory by another path (an absolute one,
// ./reports, a symbolic link). Paths are compared after resolving them
// (filepath.Abs, filepath.EvalSymlinks): the report as written, relative
// to the current directory and to the directory of the file that names
// it; failing those, a report whose file name only one served document
// has. A report served by no document stays unlinked.
func resolveReportLinks(docs []servedDoc) {
	byReal, byBase := indexServedFiles(docs)
	for _, d := range docs {
		for i := range d.doc.Predictions {
			p := &d.doc.Predictions[i]
			if p.Report == "" {
				continue
			}
			p.Report = linkTarget(p.Report, d.file, byReal, byBase)
		}
	}
}

// indexServedFiles indexes the documents that loaded by the real path
// of their file (the first document of a file) and by that path's base
// name.
func indexServedFiles(docs []servedDoc) (byReal map[string]string, byBase map[string][]string) {
	byReal, byBase = map[string]string{}, map[string][]string{}
	for _, d := range docs {
		if d.doc.Error != "" {
			continue
		}
		real, ok := realPath(d.file)
		if _, dup := byReal[real]; ok && !dup {
			byReal[real] = d.doc.Name
			byBase[filepath.Base(real)] = append(byBase[filepath.Base(real)], d.doc.Name)
		}
	}
	return byReal, byBase
}

// linkTarget is the served document's name for report, named in file.
func linkTarget(report, file string, byReal map[string]string, byBase map[string][]string) string {
	candidates := []string{report}
	if !filepath.IsAbs(report) {
		candidates = append(candidates, filepath.Join(filepath.Dir(file), report), filepath.Join(filepath.Dir(file), filepath.Base(report)))
	}
	for _, c := range candidates {
		if real, ok := realPath(c); ok {
			if name, ok := byReal[real]; ok {
				return name
			}
		}
	}
	if names := byBase[filepath.Base(report)]; len(names) == 1 {
		return names[0]
	}
	return report
}

// realPath is p absolute with its symbolic links resolved; ok is false
// for a path that does not exist.
func realPath(p string) (string, bool) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", false
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", false
	}
	if _, err := os.Stat(real); err != nil {
		return "", false
	}
	return real, true
}
