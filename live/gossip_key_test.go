package live

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var (
	key16 = []byte("0123456789abcdef")
	key24 = []byte("0123456789abcdef01234567")
	key32 = []byte("0123456789abcdef0123456789abcdef")
)

// TestParseGossipKeys: keys in hex and base64 (padded or not), one per
// line, comments and blank lines skipped, the first one primary; a line
// that is not a 16, 24 or 32-byte key is an error naming the line and
// never quoting it (it may be a secret).
func TestParseGossipKeys(t *testing.T) {
	b64, raw64 := base64.StdEncoding.EncodeToString, base64.RawStdEncoding.EncodeToString
	good := []struct {
		in   string
		want [][]byte
	}{
		{hex.EncodeToString(key16), [][]byte{key16}},
		{strings.ToUpper(hex.EncodeToString(key32)) + "\n", [][]byte{key32}},
		{b64(key32), [][]byte{key32}},
		{raw64(key32), [][]byte{key32}},
		{"  " + b64(key24) + "\t\r\n", [][]byte{key24}},
		{"# rotation in progress\n\n" + b64(key32) + "\r\n# old:\n" + hex.EncodeToString(key16) + "\n", [][]byte{key32, key16}},
	}
	for _, g := range good {
		got, err := ParseGossipKeys([]byte(g.in))
		if err != nil || len(got) != len(g.want) {
			t.Errorf("ParseGossipKeys(%q) = %x, %v; want %x", g.in, got, err, g.want)
			continue
		}
		for i := range got {
			if !bytes.Equal(got[i], g.want[i]) {
				t.Errorf("ParseGossipKeys(%q)[%d] = %x, want %x", g.in, i, got[i], g.want[i])
			}
		}
	}
	secret := b64([]byte("twenty bytes secret!"))
	bad := []struct{ in, want string }{
		{"", "no key"},
		{"# nothing\n\n", "no key"},
		{"not a key at all", "line 1: neither hex nor base64"},
		{b64(key16) + "\n" + secret, "line 2: a 20-byte key"},
		{hex.EncodeToString(key16)[:30], "line 1: a 22-byte key"}, // 30 hex digits: base64
		{b64(key16) + " " + b64(key16), "line 1: neither hex nor base64"},
	}
	for _, c := range bad {
		_, err := ParseGossipKeys([]byte(c.in))
		if !errors.Is(err, ErrGossipKey) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseGossipKeys(%q): %v, want ErrGossipKey saying %q", c.in, err, c.want)
		} else if strings.Contains(err.Error(), secret) {
			t.Errorf("the error quotes the key: %v", err)
		}
	}
}

// TestLoadGossipKeyring: a key file becomes memberlist's keyring, its
// first key primary; a missing file, or one larger than
// MaxGossipKeyFileSize (/dev/zero among them), is refused without reading
// it all.
func TestLoadGossipKeyring(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gossip.key")
	content := base64.StdEncoding.EncodeToString(key32) + "\n" + hex.EncodeToString(key16) + "\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	ring, err := LoadGossipKeyring(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ring.GetPrimaryKey(), key32) || len(ring.GetKeys()) != 2 {
		t.Errorf("keyring: primary %x, %d keys", ring.GetPrimaryKey(), len(ring.GetKeys()))
	}
	big := filepath.Join(dir, "big.key")
	if err := os.WriteFile(big, bytes.Repeat([]byte("#\n"), MaxGossipKeyFileSize), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.key")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{big, "larger than"},
		{"/dev/zero", "larger than"},
		{filepath.Join(dir, "missing"), "no such file"},
		{empty, empty + ": no key"},
	} {
		_, err := LoadGossipKeyring(c.path)
		if !errors.Is(err, ErrGossipKey) || !strings.HasPrefix(err.Error(), "live: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadGossipKeyring(%s): %v, want ErrGossipKey saying %q", c.path, err, c.want)
		}
	}
}

// FuzzParseGossipKeys: any input gives keys of 16, 24 or 32 bytes, or an
// ErrGossipKey error of bounded length.
func FuzzParseGossipKeys(f *testing.F) {
	f.Add([]byte(base64.StdEncoding.EncodeToString(key32)))
	f.Add([]byte("# c\n" + hex.EncodeToString(key24) + "\r\n" + base64.RawStdEncoding.EncodeToString(key16)))
	f.Add([]byte("not a key"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		keys, err := ParseGossipKeys(b)
		if err != nil {
			if !errors.Is(err, ErrGossipKey) || len(err.Error()) > 200 {
				t.Fatalf("error %q", err)
			}
			return
		}
		for _, k := range keys {
			if n := len(k); n != 16 && n != 24 && n != 32 {
				t.Fatalf("a %d-byte key", n)
			}
		}
	})
}
