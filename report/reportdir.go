package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// reportDir is one node's report files in a directory, oldest first, as a
// Writer keeps them: its sequence numbers, their sizes, their total.
type reportDir struct {
	path  string
	node  string // the file names' node part, e.g. "n9"
	seq   uint64 // the largest sequence number in use
	files []reportFile
	bytes int64
}

type reportFile struct {
	name string
	seq  uint64
	size int64
}

// maxNameTries bounds the names write tries when others exist already.
const maxNameTries = 1000

// scanReportDir lists node's report files in path, and removes the
// temporary files a writer killed mid-write left there.
func scanReportDir(path, node string, log *slog.Logger) (*reportDir, error) {
	d := &reportDir{path: path, node: node}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, d.tmpPrefix()) && strings.HasSuffix(name, ".tmp") {
			if err := os.Remove(filepath.Join(path, name)); err == nil {
				log.Info("steering report: removed a file a kill left half-written", slog.String("file", name))
			}
			continue
		}
		seq, ok := d.parseSeq(name)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // gone meanwhile
		}
		d.files = append(d.files, reportFile{name: name, seq: seq, size: info.Size()})
		d.bytes += info.Size()
		d.seq = max(d.seq, seq)
	}
	slices.SortFunc(d.files, func(a, b reportFile) int { return cmpSeq(a.seq, b.seq) })
	return d, nil
}

func cmpSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (d *reportDir) tmpPrefix() string { return ".prediction-" + d.node + "-" }

// parseSeq returns the sequence number of one of the node's report file
// names, prediction-NODE-cutCN-SEQ.json.
func (d *reportDir) parseSeq(name string) (uint64, bool) {
	rest, ok := strings.CutPrefix(name, "prediction-"+d.node+"-cut")
	if !ok {
		return 0, false
	}
	rest, ok = strings.CutSuffix(rest, ".json")
	if !ok {
		return 0, false
	}
	i := strings.LastIndexByte(rest, '-')
	if i < 0 {
		return 0, false
	}
	if _, err := strconv.ParseUint(rest[:i], 10, 64); err != nil {
		return 0, false
	}
	seq, err := strconv.ParseUint(rest[i+1:], 10, 64)
	return seq, err == nil
}

// write writes pd atomically under the next free name of cut and returns
// that name: a temporary file, synced, linked to the name (which fails
// rather than replace a file that exists: the next number is tried), the
// directory synced.
func (d *reportDir) write(cut string, pd Prediction) (string, error) {
	b, err := json.MarshalIndent(pd, "", "  ")
	if err != nil {
		return "", fmt.Errorf("report: encoding: %w", err)
	}
	b = append(b, '\n')
	tmp, err := writeTemp(d.path, d.tmpPrefix()+"*.tmp", b)
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp) // the name stays linked
	for range maxNameTries {
		d.seq++
		name := fmt.Sprintf("prediction-%s-%s-%d.json", d.node, cut, d.seq)
		err := link(tmp, filepath.Join(d.path, name))
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("report: %w", err)
		}
		d.files = append(d.files, reportFile{name: name, seq: d.seq, size: int64(len(b))})
		d.bytes += int64(len(b))
		return name, syncDir(d.path)
	}
	return "", fmt.Errorf("report: no free name after %d tries in %s", maxNameTries, d.path)
}

// writeTemp writes b to a new temporary file in dir named after pattern
// (os.CreateTemp), synced and closed, and returns its path.
func writeTemp(dir, pattern string, b []byte) (string, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("report: writing %s: %w", f.Name(), err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("report: %w", err)
	}
	return f.Name(), nil
}

// link gives the file at tmp the name name, never replacing a file that
// has it: a hard link, or, where the file system has none, a rename after
// a look.
func link(tmp, name string) error {
	err := os.Link(tmp, name)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	if _, serr := os.Lstat(name); serr == nil {
		return fs.ErrExist
	}
	return os.Rename(tmp, name)
}

// syncDir syncs the directory at path, so a name just linked survives a
// crash of the machine.
func syncDir(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("report: sync %s: %w", path, err)
	}
	return nil
}

// retain removes the oldest files until at most maxFiles and maxBytes
// remain (a negative bound is none; the newest file always stays), and
// returns how many it removed.
func (d *reportDir) retain(maxFiles int, maxBytes int64, log *slog.Logger) int {
	over := func() bool {
		return len(d.files) > 1 && (maxFiles >= 0 && len(d.files) > maxFiles || maxBytes >= 0 && d.bytes > maxBytes)
	}
	dropped := 0
	for over() {
		f := d.files[0]
		if err := os.Remove(filepath.Join(d.path, f.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			log.Error("steering report: removing an old report", slog.String("file", f.name), slog.Any("error", err))
			return dropped
		}
		d.files = d.files[1:]
		d.bytes -= f.size
		dropped++
	}
	return dropped
}
