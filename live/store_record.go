package live

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
)

// A store's records are sealed: each value is a CRC-32C of the key and
// the data, then the data. bbolt checksums its meta pages only; a byte
// flipped in a record's page would otherwise be read back as what the node
// promised (a Paxos acceptor's accepted value turned into one nobody
// proposed). The meta bucket lists the records' keys (the manifest,
// sealed too), so a record lost or added by damage to bbolt's pages is as
// much corruption as a changed one.

// recordSum is the checksum of a record: CRC-32C of key, a zero byte and
// data.
func recordSum(key string, data []byte) uint32 {
	c := crc32.Update(0, castagnoli, []byte(key))
	c = crc32.Update(c, castagnoli, []byte{0})
	return crc32.Update(c, castagnoli, data)
}

// sealRecord returns the stored form of a record.
func sealRecord(key string, data []byte) []byte {
	out := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(data)), recordSum(key, data))
	return append(out, data...)
}

// openRecord checks a stored record and returns a copy of its data.
func openRecord(key string, v []byte) ([]byte, error) {
	if len(v) < 4 {
		return nil, fmt.Errorf("%w: record %q of %d bytes has no checksum", ErrStoreCorrupt, truncate(key), len(v))
	}
	data := v[4:]
	if binary.BigEndian.Uint32(v) != recordSum(key, data) {
		return nil, fmt.Errorf("%w: record %q fails its checksum", ErrStoreCorrupt, truncate(key))
	}
	return append([]byte{}, data...), nil
}

// maxManifestKeys bounds the keys a manifest may list (a node has a
// handful of records: the service's and one per durable layer).
const maxManifestKeys = 1 << 12

// encodeManifest encodes sorted keys: CRC-32C of the rest, uvarint
// count, then each key as uvarint length and bytes.
func encodeManifest(keys []string) []byte {
	body := binary.AppendUvarint(nil, uint64(len(keys)))
	for _, k := range keys {
		body = binary.AppendUvarint(body, uint64(len(k)))
		body = append(body, k...)
	}
	return append(binary.BigEndian.AppendUint32(nil, crc32.Checksum(body, castagnoli)), body...)
}

// decodeManifest decodes a manifest, which must be sealed, bounded and
// sorted without repeats.
func decodeManifest(b []byte) ([]string, error) {
	bad := errors.New("the manifest of record keys is damaged")
	if len(b) < 5 || binary.BigEndian.Uint32(b) != crc32.Checksum(b[4:], castagnoli) {
		return nil, bad
	}
	keys, ok := decodeManifestKeys(b[4:])
	if !ok || !slices.IsSorted(keys) || len(slices.Compact(slices.Clone(keys))) != len(keys) {
		return nil, bad
	}
	return keys, nil
}

// decodeManifestKeys decodes a manifest's body: a uvarint count of at
// most maxManifestKeys, then that many keys (cutUvarintString) and
// nothing after them.
func decodeManifestKeys(rest []byte) ([]string, bool) {
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > maxManifestKeys || n > uint64(len(rest)) {
		return nil, false
	}
	rest = rest[k:]
	keys := make([]string, 0, n)
	for range n {
		key, r, ok := cutUvarintString(rest, math.MaxUint64)
		if !ok {
			return nil, false
		}
		keys, rest = append(keys, key), r
	}
	return keys, len(rest) == 0
}
