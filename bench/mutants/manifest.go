package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/seed6eee2ec7/crystalball/bench/mutants/mutate"
)

// manifestFormat names the JSON form of a manifest; readers check it.
const manifestFormat = "crystalball-mutants-manifest/1"

// errManifest is returned (wrapped) for a manifest that cannot be used.
var errManifest = errors.New("mutants: bad manifest")

// manifest is the corpus gen made: the mutants the runner holds, those
// discarded (they did not compile), and the digest the runner checks.
type manifest struct {
	Format string `json:"format"`
	// Seed and PerOp are the selection's seed and mutants per operator.
	Seed  uint64 `json:"seed"`
	PerOp int    `json:"per_op"`
	// Digest is digestOf(Seed, Mutants); schema.Built holds it in the
	// runner gen built.
	Digest    string          `json:"digest"`
	Mutants   []mutate.Mutant `json:"mutants"`
	Discarded []discarded     `json:"discarded"`
}

// discarded is a selected mutant that did not compile, and why.
type discarded struct {
	Mutant mutate.Mutant `json:"mutant"`
	Error  string        `json:"error"`
}

// digestOf names a corpus: the seed and the mutants' identities.
func digestOf(seed uint64, ms []mutate.Mutant) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d\n", seed)
	for _, m := range ms {
		fmt.Fprintf(h, "%d %s %s %s %d\n", m.ID, m.Service, m.Op, m.File, m.Site)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// openManifest reads the manifest file at path.
func openManifest(path string) (manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return manifest{}, fmt.Errorf("mutants: %w (run 'mutants gen' first)", err)
	}
	defer f.Close()
	return readManifest(f)
}

// readManifest decodes and checks a manifest: its format, a digest that
// matches its mutants, distinct positive IDs, known operators.
func readManifest(r io.Reader) (manifest, error) {
	var m manifest
	dec := json.NewDecoder(io.LimitReader(r, 64<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("%w: %w", errManifest, err)
	}
	if m.Format != manifestFormat {
		return m, fmt.Errorf("%w: format %q, want %q", errManifest, m.Format, manifestFormat)
	}
	seen := map[int]bool{}
	for _, x := range m.Mutants {
		switch {
		case x.ID <= 0 || seen[x.ID]:
			return m, fmt.Errorf("%w: mutant ID %d is not positive or not unique", errManifest, x.ID)
		case !slices.Contains(mutate.Ops, x.Op):
			return m, fmt.Errorf("%w: mutant %d: unknown operator %q", errManifest, x.ID, x.Op)
		case x.Service == "":
			return m, fmt.Errorf("%w: mutant %d has no service", errManifest, x.ID)
		}
		seen[x.ID] = true
	}
	if d := digestOf(m.Seed, m.Mutants); d != m.Digest {
		return m, fmt.Errorf("%w: digest %q does not match its mutants (%q)", errManifest, m.Digest, d)
	}
	return m, nil
}
