package tool

import (
	"github.com/seed6eee2ec7/crystalball/webview"
)

// errorDocument is a file of a served directory that could not be read —
// damaged, of another format, of a service this program does not serve:
// the index lists it as an error row with the reason, and the rest of
// the directory is served all the same.
func errorDocument(file string, err error) webview.Document {
	return webview.Document{Name: file, Format: "not served", Error: oneLine(err)}
}

// namedFiles are the paths given on the command line that are files: a
// file named itself must load (its error is the command's), a file found
// in a directory need not.
func namedFiles(paths []string) map[string]bool {
	out := make(map[string]bool, len(paths))
	for _, p := range paths {
		out[p] = true
	}
	return out
}
