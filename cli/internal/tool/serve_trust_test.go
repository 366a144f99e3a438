package tool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTraceShowEscapesControlCharacters: a report whose text holds
// terminal escapes (a screen clear, a title change) is printed with them
// as visible \u escapes. main wrote them raw, to drive the terminal of
// whoever read the trace.
func TestTraceShowEscapesControlCharacters(t *testing.T) {
	file, _ := walkReport(t)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	const plain = `"options":"`
	if !strings.Contains(string(b), plain) {
		t.Fatalf("the walk report has no %s", plain)
	}
	evil := writeTemp(t, "evil.json", []byte(strings.Replace(string(b), plain, `"options":"\u001b[2J\u001b]0;owned\u0007\u009b31m `, 1)))
	code, stdout, stderr := runCLI("trace", "show", evil)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.ContainsAny(stdout, "\x1b\x07\u009b") || !strings.Contains(stdout, `\u001b[2J`) {
		t.Fatalf("trace show printed the report's control characters raw:\n%.400q", stdout)
	}
}

// TestServeLeavesOutWhatItCannotRead: a directory served with a damaged
// report and a link to a file outside it serves its good report, lists
// the damaged one as an error row, and leaves the link out unread with a
// warning that quotes nothing of the linked file. main refused the whole directory, its error quoting the first
// bytes of the linked file.
func TestServeLeavesOutWhatItCannotRead(t *testing.T) {
	dir := t.TempDir()
	good := `{"format":"crystalball-experiment-bullet-overhead/1","without":{"download_s":{"sorted":[1,2,3]}},"with":{"download_s":{"sorted":[1.5,2.5,4]}}}`
	if err := os.WriteFile(filepath.Join(dir, "a-good.json"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b-damaged.json"), []byte(`{"format":`), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := writeTemp(t, "secret", []byte("root:SECRET-HASH:19000:0:99999:7:::"))
	if err := os.Symlink(secret, filepath.Join(dir, "c-link.json")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	cat, _ := newCatalog(testProgram)
	h, n, warnings, err := serveHandlerWarn(cat, []string{dir})
	if err != nil || n != 2 || len(warnings) != 1 {
		t.Fatalf("%d documents, warnings %q, err %v; want the good report, the damaged one's error row and one warning", n, warnings, err)
	}
	if w := strings.Join(warnings, "\n"); strings.Contains(w, "SECRET") || !strings.Contains(w, "outside the directory") {
		t.Fatalf("warnings %q", w)
	}
	if _, body := serveGet(t, h, "/"); strings.Contains(body, "SECRET") || strings.Count(body, `<tr class="document error-row">`) != 1 {
		t.Fatalf("the index shows the linked file or not one error row:\n%s", body)
	}
	if _, _, err := serveHandler(cat, []string{filepath.Join(dir, "b-damaged.json")}); err == nil {
		t.Fatal("a damaged file named itself was served")
	}
}

// TestTermSafeSplitRunes: a rune split across two writes comes out whole,
// a C1 control split so is escaped, and a dangling byte at the end too.
func TestTermSafeSplitRunes(t *testing.T) {
	var b strings.Builder
	w := newTermSafe(&b)
	for _, p := range []string{"é"[:1], "é"[1:] + "\u009b"[:1], "\u009b"[1:] + "ok\n\t\x1b", "\xe2"} {
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "é\\u009bok\n\t\\u001b\\xe2"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
