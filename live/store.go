package live

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Store is where a live node keeps its durable records (node.DurableWrite):
// the service's durable projection under node.ServiceDurableKey and each
// layer.Durable's state under its key. The runtime writes to it from
// its core goroutine only, and before the messages of the steps that
// produced the records leave the node; it reads it once, in Start. A
// Store need not be safe for concurrent use.
type Store interface {
	// Load returns every record, keyed as written. The values are the
	// caller's.
	Load() (map[string][]byte, error)
	// Write replaces the records named in ws, atomically (all or none),
	// and returns once they are on stable storage (synced). ws is not
	// empty; its Data slices must not be modified, nor kept.
	Write(ws []node.DurableWrite) error
	// Close releases the store. No call follows it.
	Close() error
}

// StoreFile is the name of a node's store in its
// RuntimeConfig.Durability.DataDir.
const StoreFile = "node.db"

// Store errors.
var (
	// ErrStoreInUse: another process holds the data directory's store
	// (two nodes given one --data-dir).
	ErrStoreInUse = errors.New("live: the data directory's store is in use by another process")
	// ErrStoreIdentity: the store was written by another node ID or
	// service. Recovering it would give this node another node's
	// promises.
	ErrStoreIdentity = errors.New("live: the data directory belongs to another node")
	// ErrStoreCorrupt: the store's file (or the directory's identity
	// file) cannot be read back, or a record fails its checksum.
	ErrStoreCorrupt = errors.New("live: the data directory's store is corrupt")
)

// DataDirConfig names a node's data directory and the node it belongs to.
type DataDirConfig struct {
	// Dir is the directory (created mode 0700 if need be).
	Dir string
	// ID, Service and Cluster are the node's ID, its service's name and
	// its cluster label (RuntimeConfig.Label): a directory initialised
	// for another is refused (ErrStoreIdentity).
	ID      node.ID
	Service string
	Cluster string
	// ForgetLost starts an initialised directory whose store was lost
	// with a new, empty store (see ErrStoreLost): the node forgets what
	// it promised. False (the default) refuses to start.
	ForgetLost bool
}

// OpenStore opens the store of node id running service in dir, in the
// default cluster (""): OpenDataDir with those fields.
func OpenStore(dir string, id node.ID, service string) (Store, error) {
	return OpenDataDir(DataDirConfig{Dir: dir, ID: id, Service: service})
}

// OpenDataDir opens the store of a data directory, initialising the
// directory on its first start: the store is created under a temporary
// name and renamed into place once it holds its identity (a first start
// that fails — a full disk — leaves nothing that breaks the next), then
// IdentityFile is written. It refuses a directory initialised for another
// node, service or cluster (ErrStoreIdentity), one another process holds
// (ErrStoreInUse), one whose store file or identity file is damaged —
// a file shorter than its pages, a record that fails its checksum, a
// record missing from or added to the store's list of keys
// (ErrStoreCorrupt) —, and an initialised one whose store is missing,
// empty or another incarnation's (ErrStoreLost) unless c.ForgetLost. The
// file is checked before bbolt maps it (checkStoreFile), so damage is an
// error, never a fault. Directory 0700, files 0600: they hold what the
// node promised.
func OpenDataDir(c DataDirConfig) (Store, error) {
	if err := removeLeftovers(c.Dir); err != nil {
		return nil, err
	}
	want := dataDirIdentity{Node: c.ID.String(), Service: c.Service, Cluster: c.Cluster}
	ident, initialised, err := readIdentity(c.Dir)
	if err == nil && initialised {
		err = ident.check(want)
	}
	if err != nil {
		return nil, err
	}
	path := filepath.Join(c.Dir, StoreFile)
	// A store created now is not the one the identity names: it is
	// rewritten below.
	if initialised, err = ensureStoreFile(c, path, initialised); err != nil {
		return nil, err
	}
	db, err := openBolt(path)
	if err != nil {
		return nil, err
	}
	s := &boltStore{db: db, path: path}
	if err := s.bindIdentity(c, want, ident, initialised); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// removeLeftovers creates the data directory if need be and removes the
// temporary files a failed start left in it.
func removeLeftovers(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("live: data directory: %w", err)
	}
	for _, name := range []string{StoreFile, IdentityFile} {
		if err := os.Remove(filepath.Join(dir, name+tmpSuffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("live: data directory: %w", err)
		}
	}
	return nil
}

// ensureStoreFile checks the store file at path (checkStoreFile) and,
// when it is missing or empty, creates a new store — unless the
// directory was initialised (or the file emptied) and c.ForgetLost is
// not set, which is ErrStoreLost. It returns whether the directory's
// identity still names the store: false once a new one was created.
func ensureStoreFile(c DataDirConfig, path string, initialised bool) (bool, error) {
	err := checkStoreFile(path)
	if !storeGone(err) {
		return initialised, err
	}
	if (initialised || errors.Is(err, errEmptyStoreFile)) && !c.ForgetLost {
		return false, fmt.Errorf("%w: %s was initialised for %v (%s) but %s is %s: starting would forget what the node promised; "+
			"restore the store, or start with an empty one knowing that (RuntimeConfig.Durability.ForgetLostStore, crystalball node --forget-lost-store)",
			ErrStoreLost, c.Dir, c.ID, c.Service, StoreFile, lostHow(err))
	}
	return false, createStore(c.Dir, c.ID, c.Service)
}

// storeGone reports whether checkStoreFile found no store to open: the
// file is missing or empty.
func storeGone(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, errEmptyStoreFile)
}

// bindIdentity claims the opened store for c's node (claim) and makes
// the directory's identity name the store's incarnation: in an
// initialised directory a store of another incarnation than the
// identity's is lost (ErrStoreLost) unless c.ForgetLost; the identity is
// written when the directory was not initialised or named another
// incarnation.
func (s *boltStore) bindIdentity(c DataDirConfig, want, ident dataDirIdentity, initialised bool) error {
	inc, err := s.claim(c.ID, c.Service)
	if err != nil || initialised && inc == ident.Store {
		return err
	}
	if initialised && !c.ForgetLost {
		return fmt.Errorf("%w: %s is not the store %s was initialised with (incarnation %s, found %s)",
			ErrStoreLost, StoreFile, c.Dir, truncate(ident.Store), inc)
	}
	want.Store = inc
	return writeIdentity(c.Dir, want)
}

// lostHow says how checkStoreFile found the store gone.
func lostHow(err error) string {
	if errors.Is(err, errEmptyStoreFile) {
		return "empty"
	}
	return "missing"
}

// createStore creates dir's store under a temporary name, with its
// buckets and identity (a new incarnation), synced, then renames it into
// place and syncs the directory.
func createStore(dir string, id node.ID, service string) error {
	tmp := filepath.Join(dir, StoreFile+tmpSuffix)
	inc, err := newIncarnation()
	if err != nil {
		return err
	}
	db, err := openBolt(tmp)
	if err == nil {
		s := &boltStore{db: db, path: tmp}
		err = s.update(func(tx *bolt.Tx) error { return initBuckets(tx, id, service, inc) })
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = renameInto(tmp, dir, StoreFile)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("live: create the store in %s: %w", dir, err)
	}
	return nil
}

// boltStore is the Store of a data directory: one bbolt file, one bucket
// of records and one of identity. Every Write is one bbolt transaction,
// whose commit syncs the file (bbolt's fdatasync of the data pages, then
// of the meta page), so a Write is atomic and durable when it returns.
// Every record is sealed with a checksum (store_record.go) and the meta
// bucket lists the records' keys, both checked by Load.
type boltStore struct {
	db   *bolt.DB
	path string
	// keys are the record keys the manifest lists, ascending (Write's
	// goroutine only).
	keys []string
}

var (
	bucketRecords   = []byte("records")
	bucketMeta      = []byte("meta")
	metaNode        = []byte("node")
	metaService     = []byte("service")
	metaFormat      = []byte("format")
	metaIncarnation = []byte("incarnation")
	metaKeys        = []byte("keys")
)

// storeFormat is the store's layout version, in its meta bucket:
// records sealed with a checksum, a manifest of their keys and the
// store's incarnation. storeFormatV1 (records as written, no manifest)
// is upgraded in place when opened.
const (
	storeFormat   = "crystalball-store/2"
	storeFormatV1 = "crystalball-store/1"
)

// storeLockTimeout is how long opening waits for the file lock another
// process holds before it fails with ErrStoreInUse.
const storeLockTimeout = time.Second

// openBolt opens path, turning bbolt's failures (and a panic on a file it
// cannot parse) into the store's errors.
func openBolt(path string) (db *bolt.DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			db, err = nil, fmt.Errorf("%w: %s: %v", ErrStoreCorrupt, path, p)
		}
	}()
	db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: storeLockTimeout})
	switch {
	case errors.Is(err, bolterrors.ErrTimeout):
		return nil, fmt.Errorf("%w: %s", ErrStoreInUse, path)
	case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrVersionMismatch), errors.Is(err, bolterrors.ErrChecksum):
		return nil, fmt.Errorf("%w: %s: %w", ErrStoreCorrupt, path, err)
	case err != nil:
		return nil, fmt.Errorf("live: open the store %s: %w", path, err)
	}
	return db, nil
}

// initBuckets writes a new store's buckets and identity.
func initBuckets(tx *bolt.Tx, id node.ID, service, inc string) error {
	if _, err := tx.CreateBucket(bucketRecords); err != nil {
		return err
	}
	meta, err := tx.CreateBucket(bucketMeta)
	if err != nil {
		return err
	}
	for k, v := range map[string]string{string(metaNode): id.String(), string(metaService): service,
		string(metaFormat): storeFormat, string(metaIncarnation): inc} {
		if err := meta.Put([]byte(k), []byte(v)); err != nil {
			return err
		}
	}
	return meta.Put(metaKeys, encodeManifest(nil))
}

// claim checks that the store is node id's running service, upgrades a
// format-1 store, reads the manifest, and returns the store's
// incarnation.
func (s *boltStore) claim(id node.ID, service string) (inc string, err error) {
	err = s.update(func(tx *bolt.Tx) error {
		recs, meta := tx.Bucket(bucketRecords), tx.Bucket(bucketMeta)
		if recs == nil || meta == nil {
			return fmt.Errorf("%w: %s has no records or meta bucket", ErrStoreCorrupt, s.path)
		}
		if err := checkOwner(meta, id, service); err != nil {
			return err
		}
		if err := s.upgradeFormat(recs, meta); err != nil {
			return err
		}
		keys, err := decodeManifest(meta.Get(metaKeys))
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrStoreCorrupt, s.path, err)
		}
		s.keys = keys
		inc = string(meta.Get(metaIncarnation))
		if inc == "" {
			return fmt.Errorf("%w: %s has no incarnation", ErrStoreCorrupt, s.path)
		}
		return nil
	})
	return inc, err
}

// checkOwner checks that the store's meta bucket names node id and its
// service; another's is ErrStoreIdentity.
func checkOwner(meta *bolt.Bucket, id node.ID, service string) error {
	for _, f := range []struct{ key, want string }{{string(metaNode), id.String()}, {string(metaService), service}} {
		if got := string(meta.Get([]byte(f.key))); got != f.want {
			return fmt.Errorf("%w: its %s is %q, this node's %q", ErrStoreIdentity, f.key, truncate(got), f.want)
		}
	}
	return nil
}

// upgradeFormat accepts a store of the current format, upgrades a
// format-1 one in place (upgradeV1) and refuses any other as
// ErrStoreCorrupt.
func (s *boltStore) upgradeFormat(recs, meta *bolt.Bucket) error {
	switch format := string(meta.Get(metaFormat)); format {
	case storeFormat:
		return nil
	case storeFormatV1:
		return upgradeV1(recs, meta)
	default:
		return fmt.Errorf("%w: %s has format %q, want %q", ErrStoreCorrupt, s.path, truncate(format), storeFormat)
	}
}

// upgradeV1 seals a format-1 store's records, lists them in a manifest
// and gives the store an incarnation.
func upgradeV1(recs, meta *bolt.Bucket) error {
	var keys []string
	sealed := map[string][]byte{}
	if err := recs.ForEach(func(k, v []byte) error {
		keys = append(keys, string(k))
		sealed[string(k)] = sealRecord(string(k), v)
		return nil
	}); err != nil {
		return err
	}
	for k, v := range sealed {
		if err := recs.Put([]byte(k), v); err != nil {
			return err
		}
	}
	inc, err := newIncarnation()
	if err != nil {
		return err
	}
	slices.Sort(keys)
	for k, v := range map[string][]byte{string(metaKeys): encodeManifest(keys), string(metaIncarnation): []byte(inc),
		string(metaFormat): []byte(storeFormat)} {
		if err := meta.Put([]byte(k), v); err != nil {
			return err
		}
	}
	return nil
}

// truncate bounds a string read from a file in an error message.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// update runs fn in a write transaction, a panic of bbolt on a damaged
// file (or a fault on its map) becoming ErrStoreCorrupt.
func (s *boltStore) update(fn func(*bolt.Tx) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", ErrStoreCorrupt, p)
		}
	}()
	return s.db.Update(fn)
}

func (s *boltStore) Load() (out map[string][]byte, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("%w: %v", ErrStoreCorrupt, p)
		}
	}()
	out = map[string][]byte{}
	if err = s.db.View(func(tx *bolt.Tx) error { return s.readRecords(tx, out) }); err != nil {
		return nil, fmt.Errorf("live: load the store: %w", err)
	}
	return out, nil
}

// readRecords opens every record of the records bucket into out, each
// listed in the manifest and passing its checksum, and checks that none
// the manifest lists is missing.
func (s *boltStore) readRecords(tx *bolt.Tx, out map[string][]byte) error {
	b := tx.Bucket(bucketRecords)
	if b == nil {
		return fmt.Errorf("%w: no records bucket", ErrStoreCorrupt)
	}
	if err := b.ForEach(func(k, v []byte) error { return s.openListed(out, string(k), v) }); err != nil {
		return err
	}
	for _, k := range s.keys {
		if _, ok := out[k]; !ok {
			return fmt.Errorf("%w: record %q of the store's manifest is missing", ErrStoreCorrupt, truncate(k))
		}
	}
	return nil
}

// openListed opens the stored record v of key k into out; a key the
// manifest does not list, or a record failing its checksum, is
// ErrStoreCorrupt.
func (s *boltStore) openListed(out map[string][]byte, k string, v []byte) error {
	if _, listed := slices.BinarySearch(s.keys, k); !listed {
		return fmt.Errorf("%w: record %q is not in the store's manifest", ErrStoreCorrupt, truncate(k))
	}
	data, err := openRecord(k, v)
	if err != nil {
		return err
	}
	out[k] = data
	return nil
}

func (s *boltStore) Write(ws []node.DurableWrite) error {
	keys := s.keys
	for _, w := range ws {
		if i, found := slices.BinarySearch(keys, w.Key); !found {
			if len(keys) == len(s.keys) {
				keys = slices.Clone(keys)
			}
			keys = slices.Insert(keys, i, w.Key)
		}
	}
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		for _, w := range ws {
			if err := b.Put([]byte(w.Key), sealRecord(w.Key, w.Data)); err != nil {
				return err
			}
		}
		if len(keys) != len(s.keys) {
			return tx.Bucket(bucketMeta).Put(metaKeys, encodeManifest(keys))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("live: write the store: %w", err)
	}
	s.keys = keys
	return nil
}

func (s *boltStore) Close() error { return s.db.Close() }
