package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// records maps a package's import path to its test binary's cost.
type records struct {
	path   string
	module string // module path
	root   string // module root directory
}

// load reads the records file; a missing file is no records. A line that
// does not decode is an error naming it: the file is ours, written one
// line per write, so a bad line means something else wrote there.
func (rs records) load() (map[string]record, error) {
	out := map[string]record{}
	if rs.path == "" {
		return out, nil
	}
	f, err := os.Open(rs.path)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("testbudget: records: %w", err)
	}
	defer f.Close()
	return rs.decode(f)
}

func (rs records) decode(r io.Reader) (map[string]record, error) {
	out := map[string]record{}
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("testbudget: records %s line %d: %w", rs.path, n, err)
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		var rec record
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			return nil, fmt.Errorf("testbudget: records %s line %d: %w", rs.path, n, err)
		}
		if rec.Dir == "" || rec.UserSeconds < 0 || rec.SysSeconds < 0 || rec.WallSeconds < 0 {
			return nil, fmt.Errorf("testbudget: records %s line %d: not a test binary's record: %q", rs.path, n, line)
		}
		// A package run twice (two go test runs appending to one file)
		// keeps its last record.
		out[rs.importPath(rec.Dir)] = rec
	}
}

// importPath names the package a record's directory holds.
func (rs records) importPath(dir string) string {
	rel, err := filepath.Rel(rs.root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return dir
	}
	if rel == "." {
		return rs.module
	}
	return rs.module + "/" + filepath.ToSlash(rel)
}

// findModule walks up from dir to the go.mod that holds it and returns
// the module's root and path.
func findModule(dir string) (root, module string, err error) {
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			if m := modulePath(data); m != "" {
				return d, m, nil
			}
			return "", "", fmt.Errorf("testbudget: %s has no module line", filepath.Join(d, "go.mod"))
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", "", fmt.Errorf("testbudget: %w", err)
		}
		if filepath.Dir(d) == d {
			return "", "", fmt.Errorf("testbudget: no go.mod above %s", dir)
		}
	}
}

// modulePath is the module line's path of a go.mod.
func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
