package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/seed6eee2ec7/crystalball/node"
)

// dataDirEnv names the environment variable of a live node's data
// directory.
const dataDirEnv = "ETCDKV_DATA_DIR"

// maxDurableBytes bounds a durable file read back (a live node's state:
// a few megabytes at most for this store).
const maxDurableBytes = 256 << 20

// fileDisk keeps each node's durable bytes in dir/n<ID>.durable, replaced
// atomically (written to a temporary file, synced, renamed).
type fileDisk struct{ dir string }

func (d fileDisk) path(self node.ID) string {
	return filepath.Join(d.dir, fmt.Sprintf("n%d.durable", self))
}

// Load implements kv.Disk.
func (d fileDisk) Load(self node.ID) ([]byte, error) {
	f, err := os.Open(d.path(self))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > maxDurableBytes {
		return nil, fmt.Errorf("etcdkv: %s holds %d bytes, more than %d", f.Name(), st.Size(), maxDurableBytes)
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil && st.Size() > 0 {
		return nil, err
	}
	return b, nil
}

// Save implements kv.Disk.
func (d fileDisk) Save(self node.ID, durable []byte) error {
	if err := os.MkdirAll(d.dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(d.dir, fmt.Sprintf("n%d.*.tmp", self))
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename: does nothing
	if _, err := tmp.Write(durable); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), d.path(self))
}
