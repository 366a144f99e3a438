package live

import (
	"bytes"
	"errors"
	"testing"
)

func TestHelloRoundTrip(t *testing.T) {
	h := hello{kind: helloProbe, id: 9, label: "prod", gossip: "127.0.0.1:7101", service: "127.0.0.1:7001"}
	var buf bytes.Buffer
	if err := writeHelloFrame(&buf, h); err != nil {
		t.Fatal(err)
	}
	got, err := readHelloFrame(&buf)
	if err != nil || got != h {
		t.Fatalf("got %+v, %v", got, err)
	}
	for _, bad := range [][]byte{nil, []byte("CBH1"), []byte("CBH1\x03\x01"), append(appendHello(nil, h), 0)} {
		if _, err := decodeHello(bad); !errors.Is(err, ErrHandshake) {
			t.Errorf("decodeHello(%q) = %v", bad, err)
		}
	}
}

func TestMetaRoundTrip(t *testing.T) {
	id, addr, err := decodeMeta(encodeMeta(42, "127.0.0.1:7001"))
	if err != nil || id != 42 || addr != "127.0.0.1:7001" {
		t.Fatalf("got %v %q %v", id, addr, err)
	}
	for _, bad := range [][]byte{nil, {2, 1}, {1, 0}, {1, 5, 'x'}} {
		if _, _, err := decodeMeta(bad); err == nil {
			t.Errorf("decodeMeta(%v) accepted", bad)
		}
	}
}

// FuzzDecodeHello feeds arbitrary bytes to the hello decoder, framed and
// bare: every input is a clean error or a hello that round-trips.
func FuzzDecodeHello(f *testing.F) {
	good := appendHello(nil, hello{kind: helloData, id: 7, label: "x", gossip: "127.0.0.1:7101", service: "127.0.0.1:7001"})
	for _, s := range [][]byte{good, good[:5], nil, []byte("CBH1"), AppendFrame(nil, good)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if h, err := decodeHello(in); err == nil {
			if got, err := decodeHello(appendHello(nil, h)); err != nil || got != h {
				t.Fatalf("hello round trip: %+v %v", got, err)
			}
		} else if !errors.Is(err, ErrHandshake) {
			t.Fatalf("error class: %v", err)
		}
		if h, err := readHelloFrame(bytes.NewReader(in)); err == nil {
			if got, err := decodeHello(appendHello(nil, h)); err != nil || got != h {
				t.Fatalf("framed hello round trip: %+v %v", got, err)
			}
		}
	})
}
