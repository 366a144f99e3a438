package live

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"
)

// Checking a store file before bbolt maps it. bbolt reads its pages
// through a memory map: a page that the file's meta says exists but that
// lies past the end of a truncated file faults on first touch (SIGBUS),
// which no recover catches. So the file's two meta pages are read with
// plain reads first, and the file must hold every page the newest valid
// meta counts (its high-water mark); anything else is ErrStoreCorrupt
// before the map is made.

// bbolt's on-disk layout (go.etcd.io/bbolt, file format version 2): a
// page starts with a 16-byte header; a meta page's body is magic, version,
// page size, flags (4 bytes each), the root bucket (root page, sequence),
// the freelist page, the high-water mark (pgid), the transaction ID (8
// bytes each), then an FNV-64a checksum of the body before it. Little
// endian on the platforms bbolt supports here.
const (
	boltPageHeader = 16
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	boltMetaBody   = 4*4 + 8*5 // magic … txid: what the checksum covers
	// boltMinPage and boltMaxPage bound a sane page size.
	boltMinPage = 512
	boltMaxPage = 1 << 16
)

// boltMeta is what checkStoreFile reads of one meta page.
type boltMeta struct {
	pageSize uint32
	pgid     uint64
	txid     uint64
}

// parseBoltMeta reads the meta page at the start of b; false if it is
// not a valid meta page (wrong magic, version or checksum).
func parseBoltMeta(b []byte) (boltMeta, bool) {
	if len(b) < boltMetaLen {
		return boltMeta{}, false
	}
	body := b[boltPageHeader : boltPageHeader+boltMetaBody]
	le := binary.LittleEndian
	h := fnv.New64a()
	h.Write(body)
	if le.Uint32(body[0:]) != boltMagic || le.Uint32(body[4:]) != boltVersion ||
		le.Uint64(b[boltPageHeader+boltMetaBody:]) != h.Sum64() {
		return boltMeta{}, false
	}
	return boltMeta{pageSize: le.Uint32(body[8:]), pgid: le.Uint64(body[40:]), txid: le.Uint64(body[48:])}, true
}

// errEmptyStoreFile is checkStoreFile's answer for a file of no bytes: a
// store that was emptied (or, before stores were created under a
// temporary name, one whose creation never finished).
var errEmptyStoreFile = errors.New("live: the store file is empty")

// checkStoreFile checks that the file at path is a bbolt file whose pages
// all exist: it reads the meta pages, picks the valid one with the
// newest transaction (as bbolt does), and requires the file to hold
// max(2, pgid) pages of its page size. It returns errEmptyStoreFile for an
// empty file, an ErrStoreCorrupt error for a damaged one.
func checkStoreFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("live: open the store %s: %w", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("live: stat the store %s: %w", path, err)
	}
	size := info.Size()
	if size == 0 {
		return errEmptyStoreFile
	}
	metas, err := readMetas(f, path)
	if err != nil {
		return err
	}
	return checkPages(path, metas, size)
}

// boltMetaLen is the bytes of a meta page parseBoltMeta reads: the page
// header, the body and its checksum.
const boltMetaLen = boltPageHeader + boltMetaBody + 8

// readMetas reads the file's valid meta pages with plain reads: the
// first, at the start of the file, then the second, one page in.
func readMetas(f *os.File, path string) ([]boltMeta, error) {
	metas := make([]boltMeta, 0, 2)
	first, ok, err := readMetaAt(f, 0, path)
	if err != nil {
		return nil, err
	}
	if ok {
		metas = append(metas, first)
	}
	for _, ps := range secondMetaOffsets(first, ok) {
		m, valid, err := readMetaAt(f, ps, path)
		if err != nil {
			return nil, err
		}
		if valid && int64(m.pageSize) == ps {
			return append(metas, m), nil
		}
	}
	return metas, nil
}

// secondMetaOffsets lists where the second meta page may start, one page
// in: at the first meta's page size or (the first being damaged) at any
// sane size, as bbolt looks for it.
func secondMetaOffsets(first boltMeta, firstValid bool) []int64 {
	var offs []int64
	for ps := int64(boltMinPage); ps <= boltMaxPage; ps *= 2 {
		if !firstValid || ps == int64(first.pageSize) {
			offs = append(offs, ps)
		}
	}
	return offs
}

// readMetaAt reads the meta page at offset off of f; valid is false when
// what is there (possibly nothing, past the end of the file) is not a
// valid meta page.
func readMetaAt(f *os.File, off int64, path string) (m boltMeta, valid bool, err error) {
	var buf [boltMetaLen]byte
	n, err := f.ReadAt(buf[:], off)
	if err != nil && !errors.Is(err, io.EOF) {
		return boltMeta{}, false, fmt.Errorf("live: read the store %s: %w", path, err)
	}
	m, valid = parseBoltMeta(buf[:n])
	return m, valid, nil
}

// checkPages checks the newest of the valid meta pages (the one with the
// highest transaction ID, the first on a tie, as bbolt picks it) against
// the file's size: a sane page size, and the file holding max(2, pgid)
// pages of it.
func checkPages(path string, metas []boltMeta, size int64) error {
	if len(metas) == 0 {
		return fmt.Errorf("%w: %s: no valid bbolt meta page (%d bytes)", ErrStoreCorrupt, path, size)
	}
	m := slices.MaxFunc(metas, func(a, b boltMeta) int { return cmp.Compare(a.txid, b.txid) })
	ps := uint64(m.pageSize)
	if !saneBoltPageSize(ps) {
		return fmt.Errorf("%w: %s: page size %d", ErrStoreCorrupt, path, ps)
	}
	pages := max(m.pgid, 2)
	if pages > uint64(size)/ps+1 || uint64(size) < pages*ps {
		return fmt.Errorf("%w: %s is %d bytes, its meta counts %d pages of %d bytes (truncated)", ErrStoreCorrupt, path, size, pages, ps)
	}
	return nil
}

// saneBoltPageSize reports whether ps is a power of two within
// [boltMinPage, boltMaxPage].
func saneBoltPageSize(ps uint64) bool {
	return ps >= boltMinPage && ps <= boltMaxPage && ps&(ps-1) == 0
}
