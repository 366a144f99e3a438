package live

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// StoreFile is the name of a node's store in its RuntimeConfig.DataDir.
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
	// ErrStoreCorrupt: the store's file cannot be read back.
	ErrStoreCorrupt = errors.New("live: the data directory's store is corrupt")
)

// boltStore is the Store of a data directory: one bbolt file, one bucket
// of records and one of identity. Every Write is one bbolt transaction,
// whose commit syncs the file (bbolt's fdatasync of the data pages, then
// of the meta page), so a Write is atomic and durable when it returns.
type boltStore struct {
	db *bolt.DB
}

var (
	bucketRecords = []byte("records")
	bucketMeta    = []byte("meta")
	metaNode      = []byte("node")
	metaService   = []byte("service")
	metaFormat    = []byte("format")
)

// storeFormat is the store's layout version, in its meta bucket.
const storeFormat = "crystalball-store/1"

// storeLockTimeout is how long opening waits for the file lock another
// process holds before it fails with ErrStoreInUse.
const storeLockTimeout = time.Second

// OpenStore opens (creating dir and the file if need be) the store of
// node id running service in dir, and checks that it is that node's: a
// store another node ID or service wrote is refused (ErrStoreIdentity),
// as is one another process holds (ErrStoreInUse) and one that is not a
// store (ErrStoreCorrupt). The directory is created mode 0700 and the
// file 0600: it holds what the node promised.
func OpenStore(dir string, id node.ID, service string) (Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("live: data directory: %w", err)
	}
	path := filepath.Join(dir, StoreFile)
	db, err := openBolt(path)
	if err != nil {
		return nil, err
	}
	s := &boltStore{db: db}
	if err := s.claim(id, service); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// openBolt opens path, turning bbolt's failures (and a panic on a file it
// cannot parse) into the store's errors.
func openBolt(path string) (db *bolt.DB, err error) {
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

// claim writes the node's identity into a new store, or checks it
// against the one an existing store holds.
func (s *boltStore) claim(id node.ID, service string) error {
	return s.update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bucketRecords); err != nil {
			return err
		}
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		want := map[string]string{string(metaNode): id.String(), string(metaService): service, string(metaFormat): storeFormat}
		if meta.Get(metaFormat) == nil {
			for k, v := range want {
				if err := meta.Put([]byte(k), []byte(v)); err != nil {
					return err
				}
			}
			return nil
		}
		for k, v := range want {
			if got := string(meta.Get([]byte(k))); got != v {
				return fmt.Errorf("%w: its %s is %q, this node's %q", ErrStoreIdentity, k, truncate(got), v)
			}
		}
		return nil
	})
}

// truncate bounds a string read from a file in an error message.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// update runs fn in a write transaction, a panic of bbolt on a damaged
// file becoming ErrStoreCorrupt.
func (s *boltStore) update(fn func(*bolt.Tx) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", ErrStoreCorrupt, p)
		}
	}()
	return s.db.Update(fn)
}

func (s *boltStore) Load() (out map[string][]byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("%w: %v", ErrStoreCorrupt, p)
		}
	}()
	out = map[string][]byte{}
	err = s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		if b == nil {
			return fmt.Errorf("%w: no records bucket", ErrStoreCorrupt)
		}
		return b.ForEach(func(k, v []byte) error {
			out[string(k)] = append([]byte{}, v...)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("live: load the store: %w", err)
	}
	return out, nil
}

func (s *boltStore) Write(ws []node.DurableWrite) error {
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		for _, w := range ws {
			if err := b.Put([]byte(w.Key), w.Data); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("live: write the store: %w", err)
	}
	return nil
}

func (s *boltStore) Close() error { return s.db.Close() }
