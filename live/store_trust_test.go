package live

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"

	bolt "go.etcd.io/bbolt"
)

// storeWith creates a store in a fresh directory holding recs and
// returns the directory.
func storeWith(t *testing.T, recs map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	s, err := OpenStore(dir, 1, "svc")
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range recs {
		if err := s.Write([]node.DurableWrite{{Key: k, Data: []byte(v)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestTruncatedStoreIsAnError: a store file cut short (the audit cut
// node.db to 8-20 KB) is refused with ErrStoreCorrupt before bbolt maps
// it. main faulted on the first page past the end of the file: SIGBUS,
// the process gone.
func TestTruncatedStoreIsAnError(t *testing.T) {
	dir := storeWith(t, map[string]string{node.ServiceDurableKey: "promised", "layer": "filters"})
	path := filepath.Join(dir, StoreFile)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := parseBoltMeta(good)
	if !ok {
		t.Fatal("no meta page")
	}
	used := int(m.pgid) * int(m.pageSize) // pages past it are the file's slack
	for _, n := range []int{100, 4096, 8192, 12 << 10, 16 << 10, used - 1} {
		if n <= 0 || n >= used {
			continue
		}
		if err := os.WriteFile(path, good[:n], 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := OpenStore(dir, 1, "svc")
		if err == nil {
			_, err = s.Load()
			s.Close()
		}
		if !errors.Is(err, ErrStoreCorrupt) {
			t.Errorf("store cut to %d of %d bytes: %v, want ErrStoreCorrupt", n, len(good), err)
		}
	}
}

// TestFlippedRecordByteIsAnError: one byte of a record's value flipped
// on disk is refused when the store loads. main loaded the changed bytes
// as what the node had promised (the audit's node reported a learned
// value nobody proposed).
func TestFlippedRecordByteIsAnError(t *testing.T) {
	value := "accepted-value-v2-by-ballot-7"
	dir := storeWith(t, map[string]string{node.ServiceDurableKey: value})
	path := filepath.Join(dir, StoreFile)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(good, []byte(value))
	if at < 0 {
		t.Fatal("the record is not in the file")
	}
	for _, off := range []int{0, len(value) / 2, len(value) - 1} {
		bad := bytes.Clone(good)
		bad[at+off] ^= 0x01
		if err := os.WriteFile(path, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := OpenStore(dir, 1, "svc")
		var recs map[string][]byte
		if err == nil {
			recs, err = s.Load()
			s.Close()
		}
		if !errors.Is(err, ErrStoreCorrupt) {
			t.Errorf("byte %d of the record flipped: loaded %q, err %v; want ErrStoreCorrupt", off, recs[node.ServiceDurableKey], err)
		}
	}
}

// TestLostStoreIsRefused: in a directory the node initialised, a store
// deleted, emptied, or replaced by another incarnation's refuses to start
// (ErrStoreLost) — main started as a new node and forgot its promises —,
// and starts empty with ForgetLost.
func TestLostStoreIsRefused(t *testing.T) {
	path := func(dir string) string { return filepath.Join(dir, StoreFile) }
	for _, tc := range []struct {
		name string
		lose func(t *testing.T, dir string)
	}{
		{"deleted", func(t *testing.T, dir string) { os.Remove(path(dir)) }},
		{"emptied", func(t *testing.T, dir string) { os.Truncate(path(dir), 0) }},
		{"replaced", func(t *testing.T, dir string) {
			other := storeWith(t, nil)
			b, err := os.ReadFile(path(other))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(path(dir), b, 0o600)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := storeWith(t, map[string]string{node.ServiceDurableKey: "promised"})
			tc.lose(t, dir)
			if s, err := OpenStore(dir, 1, "svc"); !errors.Is(err, ErrStoreLost) {
				if err == nil {
					s.Close()
				}
				t.Fatalf("open after the store was %s: %v, want ErrStoreLost", tc.name, err)
			}
			s, err := OpenDataDir(DataDirConfig{Dir: dir, ID: 1, Service: "svc", ForgetLost: true})
			if err != nil {
				t.Fatalf("open with ForgetLost: %v", err)
			}
			recs, err := s.Load()
			s.Close()
			if err != nil || len(recs) != 0 {
				t.Fatalf("records %q, err %v; want none", recs, err)
			}
			if s, err := OpenStore(dir, 1, "svc"); err != nil {
				t.Fatalf("the directory did not take the new store: %v", err)
			} else {
				s.Close()
			}
		})
	}
}

// TestFailedFirstStartLeavesNothing: what a first start that failed while
// creating its store leaves (the temporary file; main left a 12 KB
// node.db that faulted every later start) does not stop the next one,
// and a partial store file of the old layout is an error, not a fault.
func TestFailedFirstStartLeavesNothing(t *testing.T) {
	dir := storeWith(t, map[string]string{node.ServiceDurableKey: "x"})
	partial, err := os.ReadFile(filepath.Join(dir, StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	partial = partial[:12<<10]
	fresh := t.TempDir()
	if err := os.WriteFile(filepath.Join(fresh, StoreFile+tmpSuffix), partial, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := OpenStore(fresh, 1, "svc")
	if err != nil {
		t.Fatalf("a start after a failed first one: %v", err)
	}
	s.Close()
	if _, err := os.Stat(filepath.Join(fresh, StoreFile+tmpSuffix)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the temporary file is still there: %v", err)
	}
	old := t.TempDir()
	if err := os.WriteFile(filepath.Join(old, StoreFile), partial, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStore(old, 1, "svc"); !errors.Is(err, ErrStoreCorrupt) {
		t.Fatalf("a partial store file: %v, want ErrStoreCorrupt", err)
	}
}

// TestDataDirIdentity: a directory initialised in another cluster, and a
// damaged identity file, are refused.
func TestDataDirIdentity(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenDataDir(DataDirConfig{Dir: dir, ID: 1, Service: "svc", Cluster: "a"})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := OpenDataDir(DataDirConfig{Dir: dir, ID: 1, Service: "svc", Cluster: "b"}); !errors.Is(err, ErrStoreIdentity) {
		t.Fatalf("another cluster: %v, want ErrStoreIdentity", err)
	}
	if _, err := OpenDataDir(DataDirConfig{Dir: dir, ID: 2, Service: "svc", Cluster: "a"}); !errors.Is(err, ErrStoreIdentity) {
		t.Fatalf("another node: %v, want ErrStoreIdentity", err)
	}
	if err := os.WriteFile(filepath.Join(dir, IdentityFile), []byte(`{"format":"crystalball-datadir/1"`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenDataDir(DataDirConfig{Dir: dir, ID: 1, Service: "svc", Cluster: "a"}); !errors.Is(err, ErrStoreCorrupt) {
		t.Fatalf("a damaged identity file: %v, want ErrStoreCorrupt", err)
	}
}

// TestStoreUpgradesFormat1: a store of the first format (records
// unsealed, no manifest, no identity file) opens with its records, and
// is sealed from then on.
func TestStoreUpgradesFormat1(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(dir, StoreFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		recs, _ := tx.CreateBucket(bucketRecords)
		meta, _ := tx.CreateBucket(bucketMeta)
		meta.Put(metaNode, []byte("n1"))
		meta.Put(metaService, []byte("svc"))
		meta.Put(metaFormat, []byte(storeFormatV1))
		return recs.Put([]byte(node.ServiceDurableKey), []byte("old"))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		s, err := OpenStore(dir, 1, "svc")
		if err != nil {
			t.Fatal(err)
		}
		recs, err := s.Load()
		s.Close()
		if err != nil || string(recs[node.ServiceDurableKey]) != "old" {
			t.Fatalf("records %q, err %v", recs, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, IdentityFile)); err != nil {
		t.Fatalf("no identity file after the upgrade: %v", err)
	}
}

// FuzzDecodeIdentity: arbitrary bytes as an identity file give an
// identity or ErrStoreCorrupt, never a panic.
func FuzzDecodeIdentity(f *testing.F) {
	f.Add([]byte(`{"format":"crystalball-datadir/1","node":"n1","service":"svc","cluster":"","store":"ab"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := decodeIdentity(b); err != nil && !errors.Is(err, ErrStoreCorrupt) {
			t.Fatalf("error %v does not wrap ErrStoreCorrupt", err)
		}
	})
}

// FuzzDecodeManifest: arbitrary bytes as a store's manifest decode to
// sorted keys or fail, never panic nor allocate past the input.
func FuzzDecodeManifest(f *testing.F) {
	f.Add(encodeManifest(nil))
	f.Add(encodeManifest([]string{"a", node.ServiceDurableKey}))
	f.Add([]byte{0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		keys, err := decodeManifest(b)
		if err == nil && !bytes.Equal(encodeManifest(keys), b) {
			t.Fatalf("manifest %x decodes to %q, which encodes otherwise", b, keys)
		}
	})
}
