package live

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/memberlist"
)

// MaxGossipKeyFileSize bounds the file LoadGossipKeyring reads, in bytes:
// room for dozens of keys and comments.
const MaxGossipKeyFileSize = 4 << 10

// ErrGossipKey is wrapped by every error about a gossip key file: too
// large, unreadable, a line that is not a key, no key at all. The errors
// name lines, never their content: the file holds secrets.
var ErrGossipKey = errors.New("live: bad gossip key file")

// ParseGossipKeys parses the contents of a gossip key file: one key per
// line, each 16, 24 or 32 bytes (AES-128, -192 or -256) written in hex or
// in base64 (standard alphabet, padded or not; what `openssl rand -base64
// 32` prints). A line of exactly 32, 48 or 64 hex digits is hex, any other
// line base64. Surrounding white space, blank lines and lines starting
// with # are ignored. The first key is the primary key, which memberlist
// encrypts with; the others are accepted when decrypting, for key rotation.
// At least one key is required.
func ParseGossipKeys(b []byte) ([][]byte, error) {
	keys, err := parseGossipKeys(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrGossipKey, err)
	}
	return keys, nil
}

// parseGossipKeys is ParseGossipKeys with errors that do not wrap
// ErrGossipKey yet.
func parseGossipKeys(b []byte) ([][]byte, error) {
	var keys [][]byte
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := decodeGossipKey(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, errors.New("no key (want one 16, 24 or 32-byte key per line, in hex or base64)")
	}
	return keys, nil
}

// decodeGossipKey decodes one key line; its errors do not quote the line.
func decodeGossipKey(s string) ([]byte, error) {
	var k []byte
	var err error
	if isHexKey(s) {
		k, err = hex.DecodeString(s)
	} else {
		k, err = decodeBase64Key(s)
	}
	if err != nil {
		return nil, errors.New("neither hex nor base64")
	}
	if n := len(k); !slices.Contains(gossipKeySizes, n) {
		return nil, fmt.Errorf("a %d-byte key, want 16, 24 or 32 bytes", n)
	}
	return k, nil
}

// gossipKeySizes are the sizes of a gossip key, in bytes: AES-128, -192
// and -256.
var gossipKeySizes = []int{16, 24, 32}

// decodeBase64Key decodes a key line in base64, standard alphabet, padded
// (a line ending in "=") or not.
func decodeBase64Key(s string) ([]byte, error) {
	enc := base64.StdEncoding
	if !strings.HasSuffix(s, "=") {
		enc = base64.RawStdEncoding
	}
	return enc.DecodeString(s)
}

// isHexKey reports whether a key line is written in hex (hexKeyLens
// digits); any other line is base64.
func isHexKey(s string) bool {
	return slices.Contains(hexKeyLens, len(s)) && strings.TrimLeft(s, hexDigits) == ""
}

// hexKeyLens are the lengths of a key line in hex: 32, 48 or 64 digits
// (a 16, 24 or 32-byte key).
var hexKeyLens = []int{32, 48, 64}

// hexDigits are the digits of a key line in hex, either case.
const hexDigits = "0123456789abcdefABCDEF"

// LoadGossipKeyring reads a gossip key file (crystalball node's
// --gossip-key-file; format: ParseGossipKeys) of at most
// MaxGossipKeyFileSize bytes and returns memberlist's keyring of its keys,
// for RuntimeConfig.Gossip.Keyring. Errors wrap ErrGossipKey.
func LoadGossipKeyring(path string) (*memberlist.Keyring, error) {
	b, err := readBounded(path, MaxGossipKeyFileSize)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrGossipKey, err)
	}
	keys, err := parseGossipKeys(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrGossipKey, path, err)
	}
	ring, err := memberlist.NewKeyring(keys[1:], keys[0])
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrGossipKey, path, err)
	}
	return ring, nil
}
