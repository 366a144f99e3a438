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
