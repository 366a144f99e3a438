//go:build long

package main

import (
	"context"
	"testing"
	"time"
)

// TestEveryBugIsConfirmed: every bug's regression test fails on its
// patched copy and passes on the original.
func TestEveryBugIsConfirmed(t *testing.T) {
	w := testWorkspace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	original, err := w.copyModule(ctx, "original", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range Corpus {
		patched, err := w.copyModule(ctx, b.Name, must(b.Patch()))
		if err != nil {
			t.Fatal(err)
		}
		if err := confirm(ctx, patched, original, b); err != nil {
			t.Error(err)
		}
	}
}
