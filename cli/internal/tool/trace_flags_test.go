package tool

import (
	"io"
	"testing"
	"time"
)

// An argument the flag package stops at without taking it as a flag ("-"
// alone, or an empty one) is a FILE: parsing it used to loop for ever.
func TestTraceFlagsTakeDashAndEmptyAsFile(t *testing.T) {
	for _, args := range [][]string{{"-"}, {""}, {"--step", "1", "-"}, {"-", "x"}} {
		done := make(chan error, 1)
		var file string
		go func() {
			var err error
			_, file, err = parseTraceFlags(testCatalog(), "show", args, io.Discard)
			done <- err
		}()
		select {
		case err := <-done:
			want := len(args) == 1 || args[0] == "--step"
			if want && (err != nil || file != args[len(args)-1]) {
				t.Errorf("%q: file %q, error %v; want the file %q", args, file, err, args[len(args)-1])
			}
			if !want && err == nil {
				t.Errorf("%q: two files accepted", args)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%q: parsing the flags does not end", args)
		}
	}
}
