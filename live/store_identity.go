package live

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// A data directory is initialised once: its first start creates the store
// and then writes IdentityFile, naming the node, the service, the cluster
// and the store's incarnation (a random token the store's meta bucket
// holds too). From then on the directory says what it is, whatever
// happens to the store: a store file that is missing or empty, or one of
// another incarnation (a store copied or recreated in its place), in an
// initialised directory is a store lost — the node would start as new and
// forget what it promised, which for a Paxos acceptor breaks the
// protocol —, refused with ErrStoreLost unless the operator says the loss
// is known (RuntimeConfig.Durability.ForgetLostStore).

// IdentityFile is the name of a data directory's identity file.
const IdentityFile = "identity.json"

// identityFormat is IdentityFile's format field.
const identityFormat = "crystalball-datadir/1"

// maxIdentityFile bounds the bytes read of an identity file.
const maxIdentityFile = 4 << 10

// ErrStoreLost: the data directory was initialised but its store is gone
// (missing, emptied, or replaced by another incarnation's).
var ErrStoreLost = errors.New("live: the data directory's store was lost")

// dataDirIdentity is IdentityFile's content.
type dataDirIdentity struct {
	Format  string `json:"format"`
	Node    string `json:"node"`
	Service string `json:"service"`
	Cluster string `json:"cluster"`
	// Store is the incarnation of the store the directory was
	// initialised with (storeIncarnation).
	Store string `json:"store"`
}

// decodeIdentity parses an identity file's bytes: at most
// maxIdentityFile, one JSON object of IdentityFile's fields and no other,
// in its format.
func decodeIdentity(b []byte) (dataDirIdentity, error) {
	if len(b) > maxIdentityFile {
		return dataDirIdentity{}, fmt.Errorf("%w: identity file of %d bytes, at most %d", ErrStoreCorrupt, len(b), maxIdentityFile)
	}
	id, err := parseIdentityJSON(b)
	if err != nil {
		return dataDirIdentity{}, err
	}
	if id.Format != identityFormat {
		return dataDirIdentity{}, fmt.Errorf("%w: identity file format %q, want %q", ErrStoreCorrupt, truncate(id.Format), identityFormat)
	}
	if slices.Contains([]string{id.Node, id.Service, id.Store}, "") {
		return dataDirIdentity{}, fmt.Errorf("%w: identity file without a node, service or store", ErrStoreCorrupt)
	}
	return id, nil
}

// parseIdentityJSON parses one JSON object of IdentityFile's fields and
// no other, with nothing after it.
func parseIdentityJSON(b []byte) (dataDirIdentity, error) {
	var id dataDirIdentity
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&id); err != nil {
		return dataDirIdentity{}, fmt.Errorf("%w: identity file: %w", ErrStoreCorrupt, err)
	}
	if dec.More() {
		return dataDirIdentity{}, fmt.Errorf("%w: identity file: data after its object", ErrStoreCorrupt)
	}
	return id, nil
}

// readIdentity reads dir's identity file; ok is false when there is none.
func readIdentity(dir string) (id dataDirIdentity, ok bool, err error) {
	f, err := os.Open(filepath.Join(dir, IdentityFile))
	if errors.Is(err, os.ErrNotExist) {
		return id, false, nil
	}
	if err != nil {
		return id, false, fmt.Errorf("live: data directory: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxIdentityFile+1))
	if err != nil {
		return id, false, fmt.Errorf("live: data directory: read %s: %w", IdentityFile, err)
	}
	id, err = decodeIdentity(b)
	if err != nil {
		return id, false, fmt.Errorf("%w (in %s)", err, dir)
	}
	return id, true, nil
}

// check compares the identity with the node's; a mismatch is
// ErrStoreIdentity.
func (id dataDirIdentity) check(want dataDirIdentity) error {
	for _, f := range []struct{ name, got, want string }{
		{"node", id.Node, want.Node}, {"service", id.Service, want.Service}, {"cluster", id.Cluster, want.Cluster},
	} {
		if f.got != f.want {
			return fmt.Errorf("%w: its %s is %q, this node's %q", ErrStoreIdentity, f.name, truncate(f.got), f.want)
		}
	}
	return nil
}

// writeIdentity writes dir's identity file atomically: a temporary file,
// synced, renamed over the name, and the directory synced.
func writeIdentity(dir string, id dataDirIdentity) error {
	id.Format = identityFormat
	b, err := json.MarshalIndent(id, "", "  ")
	if err != nil {
		return fmt.Errorf("live: data directory: %w", err)
	}
	return writeFileAtomic(dir, IdentityFile, append(b, '\n'))
}

// writeFileAtomic writes name in dir through a temporary file renamed over
// it, syncing the file and the directory.
func writeFileAtomic(dir, name string, b []byte) error {
	tmp := filepath.Join(dir, name+tmpSuffix)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("live: data directory: %w", err)
	}
	err = writeSynced(f, b)
	if err == nil {
		err = renameInto(tmp, dir, name)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("live: data directory: write %s: %w", name, err)
	}
	return nil
}

// writeSynced writes b to f, syncs it and closes it.
func writeSynced(f *os.File, b []byte) error {
	_, err := f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// renameInto renames the file tmp to name in dir and syncs dir, so the
// rename is durable.
func renameInto(tmp, dir, name string) error {
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	return syncDir(dir)
}

// tmpSuffix marks a file being created; a start removes what a failed
// one left.
const tmpSuffix = ".tmp"

// syncDir syncs a directory, so a rename in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// newIncarnation returns a fresh store incarnation token.
func newIncarnation() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("live: data directory: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
