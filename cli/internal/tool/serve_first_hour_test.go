package tool

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stampServeDir writes a directory as 'emulate --reports reports/ --json
// > run.json' leaves one: run.json names its report by the relative path
// it was given, reports/check.json (a check --json of the stamp service).
func stampServeDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	code, stdout, stderr := runProgram(stampProgram(), "check", "--service", "stamp", "--nodes", "2", "--json")
	if code != exitOK {
		t.Fatalf("check: exit %d %s", code, stderr)
	}
	if err := os.MkdirAll(filepath.Join(dir, "reports"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "reports", "check.json"), []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	run := `{"format":"crystalball-emulate/1","service":"stamp","nodes":2,"duration":"1m0s","seed":1,"predictors":[1],"predictions":[
	 {"property":"AtMostTwoPings","kind":"safety","node":1,"first_predicted_s":2,"depth":7,"report":"reports/check.json"}]}`
	if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte(run), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A prediction links to its report however the paths were spelled: the
// run's relative reports/… against the directory served by an absolute
// path, or through a symbolic link.
func TestServeLinksReportsWhateverThePathSpelling(t *testing.T) {
	dir := stampServeDir(t)
	link := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	cat, _ := newCatalog(stampProgram())
	for _, paths := range [][]string{
		{filepath.Join(dir, "run.json"), filepath.Join(dir, "reports")},
		{filepath.Join(link, "run.json"), filepath.Join(dir, "reports", "check.json")},
	} {
		h, n, err := serveHandler(cat, paths)
		if err != nil || n != 2 {
			t.Fatalf("serve %v: %d documents, %v", paths, n, err)
		}
		_, body := serveGet(t, h, "/")
		if !strings.Contains(body, `<tr class="prediction"><td><a href="/doc/2">AtMostTwoPings</a>`) {
			t.Errorf("serve %v: the prediction does not link to its report:\n%s", paths, body)
		}
	}
}

// A damaged file, or a report of a service this program does not serve,
// in a served directory is an error row saying why; the rest is served.
func TestServeListsABadFileAsAnErrorRow(t *testing.T) {
	dir := stampServeDir(t)
	reports := filepath.Join(dir, "reports")
	os.WriteFile(filepath.Join(reports, "broken.json"), []byte(`{"format":"crystalball-check/1",`), 0o644)
	os.WriteFile(filepath.Join(reports, "foreign.json"), []byte(`{"format":"crystalball-check/1","target":"nosuch","nodes":2,"reports":[{"property":"P","kind":"safety","depth":0,"path":[],"fingerprint":"00000000000000000000000000000000"}]}`), 0o644)
	cat, _ := newCatalog(stampProgram())
	h, n, err := serveHandler(cat, []string{reports})
	if err != nil || n != 3 {
		t.Fatalf("serve DIR: %d documents, %v; want 3 (two of them errors)", n, err)
	}
	_, body := serveGet(t, h, "/")
	if got := strings.Count(body, `<tr class="document error-row">`); got != 2 {
		t.Errorf("%d error rows, want 2:\n%s", got, body)
	}
	for _, want := range []string{"not a JSON report", `a report of service &#34;nosuch&#34;, which this program does not serve`} {
		if !strings.Contains(body, want) {
			t.Errorf("index lacks %q:\n%s", want, body)
		}
	}
	if code, page := serveGet(t, h, "/doc/1"); code != http.StatusOK || !strings.Contains(page, `id="doc-error"`) {
		t.Errorf("an error document's page: %d\n%s", code, page)
	}
	// A file named on the command line must load.
	if _, _, err := serveHandler(cat, []string{filepath.Join(reports, "broken.json")}); err == nil {
		t.Error("a damaged file named on the command line was served")
	}
}

// An experiment's page leads with its headline beside the paper's and
// draws the charts it declares, not one per numeric field.
func TestServeLeadsAnExperimentWithItsHeadline(t *testing.T) {
	file := filepath.Join(t.TempDir(), "paxos.json")
	doc := `{"format":"crystalball-experiment-paxos/1","runs":2,
	 "headline":{"figure":"runs in which CrystalBall avoided the violation","measured":"2 of 2 (100%)","paper":"98% (§5.4.2, bug1)"},
	 "charts":[{"title":"How the violation was avoided in 2 runs","kind":"bars","y":"runs","labels":["by steering","by the check","violated"],"values":[2,0,0]}],
	 "per_run":[{"run":0,"gap_s":1,"rounds":3},{"run":1,"gap_s":2,"rounds":4}]}`
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cat, _ := newCatalog(testProgram)
	h, _, err := serveHandler(cat, []string{file})
	if err != nil {
		t.Fatal(err)
	}
	_, body := serveGet(t, h, "/doc/1")
	for _, want := range []string{`id="headline"`, "2 of 2 (100%)", "98% (§5.4.2, bug1)", "How the violation was avoided in 2 runs (runs)"} {
		if !strings.Contains(body, want) {
			t.Errorf("experiment page lacks %q:\n%s", want, body)
		}
	}
	if n := strings.Count(body, `<div class="figure">`); n != 1 {
		t.Errorf("%d figures, want the one declared", n)
	}
}
