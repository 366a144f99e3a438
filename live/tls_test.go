package live

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/node"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// tlsFor returns node id's TLSConfig: a certificate from ca, trusting ca.
func tlsFor(t *testing.T, ca *livetest.CA, id node.ID) *TLSConfig {
	t.Helper()
	c, k := ca.NodeCert(t, uint64(id))
	tc, err := ParseTLSConfig(c, k, ca.PEM())
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

// selfSigned returns a stranger's TLSConfig: a self-signed certificate
// naming id, trusting only itself.
func selfSigned(t *testing.T, id node.ID) *TLSConfig {
	t.Helper()
	c, k := livetest.SelfSigned(t, uint64(id))
	tc, err := ParseTLSConfig(c, k, c)
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

func withTLS(tc *TLSConfig) func(*RuntimeConfig) {
	return func(c *RuntimeConfig) { c.TLS = tc }
}

// newTLSNode builds (but does not start) a note node with tc and a short
// JoinTimeout, stopped at cleanup.
func newTLSNode(t *testing.T, id node.ID, tc *TLSConfig, join ...string) *Runtime {
	t.Helper()
	cfg := DefaultRuntimeConfig()
	cfg.ID, cfg.Join, cfg.Label, cfg.TLS = id, join, "test", tc
	cfg.JoinTimeout = 600 * time.Millisecond
	r, err := NewRuntime(cfg, noteSpec())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Stop(context.Background()) })
	return r
}

func rejected(r *Runtime) uint64 { return r.Status().Counters.FramesRejected }

// noteUntilGot sends a note from one node to another, again every 2s,
// until it arrives: under load the first connection's TLS handshake can
// outlast HandshakeTimeout, and the note it carried is then lost (the
// service gets a transport error), which is the transport's contract, not
// what these tests are about.
func noteUntilGot(t *testing.T, from, to *Runtime, text string) {
	t.Helper()
	want := fmt.Sprintf("%v:%s", from.cfg.ID, text)
	deadline := time.Now().Add(waitDeadline)
	for !gotNote(t, to, want)() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", waitDeadline, want)
		}
		if err := from.Submit(sendNote{To: to.cfg.ID, Text: text}); err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(2 * time.Second); time.Now().Before(end) && !gotNote(t, to, want)(); {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestTLSClusterFormsAndCarriesMessages: nodes with certificates of the
// cluster CA form a cluster over mutual TLS and exchange messages both
// ways; a node without TLS cannot join it (its probe is refused and
// counted).
func TestTLSClusterFormsAndCarriesMessages(t *testing.T) {
	t.Cleanup(func() { livetest.VerifyNone(t) })
	ca := livetest.NewCA(t, "cluster")
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), withTLS(tlsFor(t, ca, 1)))
	n2 := startNoteNodeWith(t, 2, zap.NewNop(), withTLS(tlsFor(t, ca, 2)), n1.Addr())
	noteUntilGot(t, n1, n2, "over tls")
	noteUntilGot(t, n2, n1, "back")

	plain := newTLSNode(t, 3, nil, n1.Addr())
	if err := plain.Start(context.Background()); err == nil {
		t.Fatal("a node without TLS joined a TLS cluster")
	} else if !strings.Contains(err.Error(), "no TLS configured") {
		t.Errorf("a node without TLS refused by a TLS cluster: %v, want a word of TLS", err)
	}
	waitFor(t, "n1 to count the plaintext probe", func() bool { return rejected(n1) > 0 })
	if n := n1.ml.NumMembers(); n != 2 {
		t.Errorf("n1 sees %d members, want 2", n)
	}
	n2.Stop(context.Background())
	n1.Stop(context.Background())
}

// TestTLSRefusesStrangers: a node whose certificate is not of the cluster
// CA (signed by another CA, or self-signed) cannot join the cluster nor
// speak to its nodes; neither can a TLS client without a certificate.
// Each refusal is counted. A cluster node does not join through a
// stranger either.
func TestTLSRefusesStrangers(t *testing.T) {
	t.Cleanup(func() { livetest.VerifyNone(t) })
	ca := livetest.NewCA(t, "cluster")
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), withTLS(tlsFor(t, ca, 1)))
	strangers := map[string]*TLSConfig{
		"another CA":  tlsFor(t, livetest.NewCA(t, "other"), 2),
		"self-signed": selfSigned(t, 2),
	}
	for name, tc := range strangers {
		t.Run(name, func(t *testing.T) {
			before := rejected(n1)
			s := newTLSNode(t, 2, tc, n1.Addr())
			if err := s.Start(context.Background()); err == nil {
				t.Fatal("the stranger joined")
			}
			waitFor(t, "n1 to count the stranger's probes", func() bool { return rejected(n1) > before })
			before = rejected(n1)
			speakTLS(t, n1.Addr(), tc.config(false), 2)
			waitFor(t, "n1 to count the stranger's connection", func() bool { return rejected(n1) > before })

			// The cluster's n3 does not take the stranger for a cluster node.
			s2 := newTLSNode(t, 2, tc)
			if err := s2.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			n3 := newTLSNode(t, 3, tlsFor(t, ca, 3), s2.Addr())
			if err := n3.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "certificate") {
				t.Errorf("n3 joining through the stranger: %v, want a certificate error", err)
			}
			n3.Stop(context.Background())
			s2.Stop(context.Background())
		})
	}
	t.Run("no certificate", func(t *testing.T) {
		before := rejected(n1)
		cfg := tlsFor(t, ca, 2).config(false)
		cfg.Certificates = nil
		speakTLS(t, n1.Addr(), cfg, 2)
		waitFor(t, "n1 to count the connection", func() bool { return rejected(n1) > before })
	})
	if got := noteState(t, n1).Got; strings.Contains(strings.Join(got, " "), "n2:") {
		t.Errorf("n1 received from a stranger: %v", got)
	}
	if st := n1.Status(); st.Counters.MessagesIn != 0 || len(st.Peers) != 0 {
		t.Errorf("n1 after the strangers: %d messages in, peers %v", st.Counters.MessagesIn, st.Peers)
	}
	n1.Stop(context.Background())
}

// speakTLS connects to addr over TLS with cfg and tries to speak as id: a
// data hello, then a note. The node must close the connection; it may
// answer a well-formed hello first (it does, so that a peer of another
// cluster can say why it was refused), but nothing else.
func speakTLS(t *testing.T, addr string, cfg *tls.Config, id node.ID) {
	t.Helper()
	raw, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(5 * time.Second))
	conn := tls.Client(raw, cfg)
	// The client's handshake may pass (TLS 1.3 sends the client's
	// certificate last): the refusal shows when reading.
	writeHelloFrame(conn, hello{kind: helloData, id: id, label: "test"})
	writeNote(t, conn, id, 1)
	_, err = readHelloFrame(conn)
	if err == nil {
		var b [1]byte
		_, err = conn.Read(b[:])
		if err == nil {
			t.Fatal("the node sent more than a hello to the stranger")
		}
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the node did not close the stranger's connection")
	}
}

// writeNote writes a note from → to as one frame, ignoring errors (the
// node may have closed the connection).
func writeNote(t *testing.T, conn net.Conn, from, to node.ID) {
	t.Helper()
	reg, err := noteSpec().Registry()
	if err != nil {
		t.Fatal(err)
	}
	payload, err := reg.AppendEnvelope(nil, node.Envelope{From: from, To: to, Msg: note{Text: "spoofed"}})
	if err != nil {
		t.Fatal(err)
	}
	conn.Write(AppendFrame(nil, payload))
}

// TestTLSHelloCannotClaimAnotherID: a peer holding the cluster's
// certificate for n3 cannot say it is n2 in its hello, neither when it
// connects (n2's real connection and address stay) nor when it is dialled;
// the refusal is counted. As itself, n3, it is accepted.
func TestTLSHelloCannotClaimAnotherID(t *testing.T) {
	t.Cleanup(func() { livetest.VerifyNone(t) })
	ca := livetest.NewCA(t, "cluster")
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), withTLS(tlsFor(t, ca, 1)))
	n2 := startNoteNodeWith(t, 2, zap.NewNop(), withTLS(tlsFor(t, ca, 2)), n1.Addr())
	if err := n2.Submit(sendNote{To: 1, Text: "real"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to get n2's note", gotNote(t, n1, "n2:real"))
	n3cfg := tlsFor(t, ca, 3)

	before := rejected(n1)
	speakTLS(t, n1.Addr(), n3cfg.config(false), 2)
	waitFor(t, "n1 to count the spoofed hello", func() bool { return rejected(n1) > before })
	for _, p := range n1.Status().Peers {
		if p.ID == 2 && (p.ServiceAddr != n2.Addr() || !p.Inbound) {
			t.Errorf("n1's n2 after the spoofed hello: %+v, want address %s with its inbound connection", p, n2.Addr())
		}
	}
	if err := n2.Submit(sendNote{To: 1, Text: "still"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to get n2's next note", gotNote(t, n1, "n2:still"))
	if got := noteState(t, n1).Got; strings.Contains(strings.Join(got, " "), "spoofed") {
		t.Errorf("n1 took the spoofed note: %v", got)
	}

	t.Run("as itself", func(t *testing.T) {
		raw, err := net.DialTimeout("tcp", n1.Addr(), 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		raw.SetDeadline(time.Now().Add(5 * time.Second))
		conn := tls.Client(raw, n3cfg.config(false))
		if err := writeHelloFrame(conn, hello{kind: helloProbe, id: 3, label: "test"}); err != nil {
			t.Fatal(err)
		}
		if h, err := readHelloFrame(conn); err != nil || h.id != 1 {
			t.Fatalf("n3's own hello: %+v, %v", h, err)
		}
	})

	t.Run("when dialled", func(t *testing.T) {
		addr := serveSpoofedHello(t, n3cfg, 2)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if h, err := n1.tr.probe(ctx, addr); !errors.Is(err, ErrHandshake) {
			t.Errorf("probing a node with n3's certificate that says n2: %+v, %v; want ErrHandshake", h, err)
		}
	})
	n2.Stop(context.Background())
	n1.Stop(context.Background())
}

// serveSpoofedHello serves, on a loopback port it returns, one TLS
// connection with tc's certificate that answers every hello with a hello
// claiming id.
func serveSpoofedHello(t *testing.T, tc *TLSConfig, id node.ID) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", tc.config(true))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := readHelloFrame(conn); err == nil {
			writeHelloFrame(conn, hello{kind: helloProbe, id: id, label: "test"})
		}
		var b [1]byte
		conn.Read(b[:]) // until the prober hangs up
	}()
	return ln.Addr().String()
}

// TestTLSConfigRefusesBadCertificates: a node's own TLS configuration is
// checked before it starts: the certificate must name this node, once,
// and chain to the CA bundle, which must be PEM certificates only.
func TestTLSConfigRefusesBadCertificates(t *testing.T) {
	ca, other := livetest.NewCA(t, "cluster"), livetest.NewCA(t, "other")
	c3, k3 := ca.NodeCert(t, 3)
	cases := map[string]struct {
		cert, key, cas []byte
		want           string
	}{
		"garbage certificate": {[]byte("hello"), k3, ca.PEM(), "certificate and key"},
		"key of another cert": {c3, mustKey(t, ca), ca.PEM(), "certificate and key"},
		"no node URI":         pemPair(t, ca, "https://example.com/n3", "no crystalball://node/<ID> URI SAN"),
		"two node URIs":       pemPair(t, ca, "crystalball://node/3", "crystalball://node/4", "several nodes"),
		"node 0":              pemPair(t, ca, "crystalball://node/0", "positive ID"),
		"leading zero":        pemPair(t, ca, "crystalball://node/03", "positive ID"),
		"not a number":        pemPair(t, ca, "crystalball://node/n3", "positive ID"),
		"too large":           pemPair(t, ca, "crystalball://node/18446744073709551616", "out of range"),
		"another CA":          {c3, k3, other.PEM(), "certificate signed by unknown authority"},
		"empty CA bundle":     {c3, k3, nil, "no certificate"},
		"CA bundle of keys":   {c3, k3, k3, "want CERTIFICATE"},
		"CA bundle trailer":   {c3, k3, append(append([]byte{}, ca.PEM()...), "junk"...), "not PEM"},
	}
	for name, c := range cases {
		if c.cas == nil && name != "empty CA bundle" {
			c.cas = ca.PEM()
		}
		_, err := ParseTLSConfig(c.cert, c.key, c.cas)
		if !errors.Is(err, ErrCertificate) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrCertificate saying %q", name, err, c.want)
		}
	}
	tc, err := ParseTLSConfig(c3, k3, ca.PEM())
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		name string
		tc   *TLSConfig
		want string
	}{
		{"another node's certificate", tc, "names n3, not this node (n2)"},
		{"no CA pool", &TLSConfig{Certificate: tc.Certificate}, "no CA pool"},
		{"no certificate", &TLSConfig{CAs: tc.CAs}, "no certificate"},
	} {
		_, err := NewRuntime(RuntimeConfig{ID: 2, TLS: bad.tc}, noteSpec())
		if !errors.Is(err, ErrCertificate) || !strings.HasPrefix(err.Error(), "live: RuntimeConfig.TLS: ") || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want a RuntimeConfig.TLS error saying %q", bad.name, err, bad.want)
		}
	}
}

// pemPair is a certificate from ca with the given URI SANs, its key, no CA
// bundle (the case's default) and the error wanted.
func pemPair(t *testing.T, ca *livetest.CA, args ...string) struct {
	cert, key, cas []byte
	want           string
} {
	c, k := ca.Cert(t, args[:len(args)-1]...)
	return struct {
		cert, key, cas []byte
		want           string
	}{c, k, nil, args[len(args)-1]}
}

func mustKey(t *testing.T, ca *livetest.CA) []byte {
	_, k := ca.NodeCert(t, 9)
	return k
}

// TestLoadTLSConfigBoundsFiles: LoadTLSConfig reads the node's files, and
// refuses a missing file or one beyond MaxPEMFileSize (/dev/zero among
// them) without reading it all.
func TestLoadTLSConfigBoundsFiles(t *testing.T) {
	dir := t.TempDir()
	ca := livetest.NewCA(t, "cluster")
	cert, key, cas := ca.WriteNodeFiles(t, dir, 4)
	tc, err := LoadTLSConfig(cert, key, cas)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := tc.ownID(); err != nil || id != 4 {
		t.Errorf("loaded certificate names %v (%v), want n4", id, err)
	}
	big := filepath.Join(dir, "big.crt")
	if err := os.WriteFile(big, make([]byte, MaxPEMFileSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ cert, key, cas, want string }{
		{cert, key, big, "larger than"},
		{cert, key, "/dev/zero", "larger than"},
		{filepath.Join(dir, "missing"), key, cas, "no such file"},
	} {
		_, err := LoadTLSConfig(c.cert, c.key, c.cas)
		if !errors.Is(err, ErrCertificate) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadTLSConfig(%s, %s, %s): %v, want %q", c.cert, c.key, c.cas, err, c.want)
		}
	}
}

// TestNodeURIRoundTrips: NodeURI and CertificateNodeID agree, and
// livetest's certificates use the same encoding.
func TestNodeURIRoundTrips(t *testing.T) {
	for _, id := range []node.ID{1, 7, 1 << 40, ^node.ID(0)} {
		if got, err := parseNodeURI(NodeURI(id)); err != nil || got != id {
			t.Errorf("parseNodeURI(NodeURI(%v)) = %v, %v", id, got, err)
		}
	}
	if tc := tlsFor(t, livetest.NewCA(t, "ca"), 12); tc.Certificate.Leaf == nil {
		t.Fatal("no parsed leaf")
	} else if id, err := CertificateNodeID(tc.Certificate.Leaf); err != nil || id != 12 {
		t.Errorf("livetest's certificate for 12 names %v, %v", id, err)
	}
}

// FuzzParseNodeURI: any string parses to a node ID that NodeURI spells the
// same way, or to an ErrCertificate error quoting at most a short prefix.
func FuzzParseNodeURI(f *testing.F) {
	for _, s := range []string{"crystalball://node/7", "crystalball://node/0", "crystalball://node/", "crystalball://node/-1",
		"crystalball://node/99999999999999999999999", "https://node/7", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := parseNodeURI(s)
		if err != nil {
			if !errors.Is(err, ErrCertificate) || len(err.Error()) > 256 {
				t.Fatalf("error %q", err)
			}
			return
		}
		if id == node.None || NodeURI(id) != s {
			t.Fatalf("%q parsed to %v", s, id)
		}
	})
}

// FuzzParseTLSConfig: ParseTLSConfig never panics on any three inputs and
// returns either a configuration naming one node or an ErrCertificate
// error.
func FuzzParseTLSConfig(f *testing.F) {
	ca := livetest.NewCA(f, "fuzz")
	c, k := ca.NodeCert(f, 5)
	f.Add(c, k, ca.PEM())
	f.Add(c, k, c)
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), k, ca.PEM())
	f.Fuzz(func(t *testing.T, cert, key, cas []byte) {
		tc, err := ParseTLSConfig(cert, key, cas)
		if err != nil {
			if !errors.Is(err, ErrCertificate) {
				t.Fatalf("error %v does not wrap ErrCertificate", err)
			}
			return
		}
		if _, err := tc.ownID(); err != nil {
			t.Fatalf("accepted a configuration that names no node: %v", err)
		}
	})
}

// TestRuntimeWarnsOfPlaintext: a node started without TLS, or without a
// gossip key, says so at start; one with both says nothing of the kind.
func TestRuntimeWarnsOfPlaintext(t *testing.T) {
	t.Cleanup(func() { livetest.VerifyNone(t) })
	ca := livetest.NewCA(t, "cluster")
	for _, c := range []struct {
		name string
		tune func(*RuntimeConfig)
		want []string
	}{
		{"neither", func(*RuntimeConfig) {}, []string{"plaintext", "gossip is unencrypted"}},
		{"TLS only", withTLS(tlsFor(t, ca, 1)), []string{"gossip is unencrypted"}},
		{"both", func(c *RuntimeConfig) { c.TLS, c.Gossip.SecretKey = tlsFor(t, ca, 1), key16 }, nil},
	} {
		core, logs := observer.New(zapcore.WarnLevel)
		r := startNoteNodeWith(t, 1, zap.New(core), c.tune)
		if err := r.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range logs.All() {
			got = append(got, e.Message)
		}
		all := strings.Join(got, "\n")
		for _, w := range c.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: warnings %q, want one about %q", c.name, got, w)
			}
		}
		if len(c.want) == 0 && (strings.Contains(all, "plaintext") || strings.Contains(all, "unencrypted")) {
			t.Errorf("%s: warnings %q", c.name, got)
		}
	}
}

// TestTLSEncryptsTheWire: a note n2 sends n1 crosses a recording proxy (n1
// advertises the proxy's address) in the clear without TLS, and not with.
func TestTLSEncryptsTheWire(t *testing.T) {
	t.Cleanup(func() { livetest.VerifyNone(t) })
	ca := livetest.NewCA(t, "cluster")
	const secret = "a-secret-note-text"
	for _, withTLS := range []bool{false, true} {
		p := newRecordingProxy(t)
		tune := func(id node.ID) func(*RuntimeConfig) {
			return func(c *RuntimeConfig) {
				if withTLS {
					c.TLS = tlsFor(t, ca, id)
				}
				if id == 1 {
					c.Advertise = p.addr()
				}
			}
		}
		n1 := startNoteNodeWith(t, 1, zap.NewNop(), tune(1))
		p.forwardTo(n1.tr.ln.Addr().String())
		n2 := startNoteNodeWith(t, 2, zap.NewNop(), tune(2), p.addr())
		if err := n2.Submit(sendNote{To: 1, Text: secret}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "n1 to get the note", gotNote(t, n1, "n2:"+secret))
		n2.Stop(context.Background())
		n1.Stop(context.Background())
		if got := strings.Contains(p.stop(), secret); got == withTLS {
			t.Errorf("with TLS %v: the note's text on the wire: %v", withTLS, got)
		}
	}
}

// recordingProxy forwards TCP connections to a target set after it
// started, recording what the clients send.
type recordingProxy struct {
	ln     net.Listener
	target chan string // holds the target once set
	done   chan struct{}
	once   sync.Once
	mu     sync.Mutex
	sent   bytes.Buffer
	conns  []net.Conn
	wg     sync.WaitGroup
}

func newRecordingProxy(t *testing.T) *recordingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{ln: ln, target: make(chan string, 1), done: make(chan struct{})}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() { p.stop() })
	return p
}

func (p *recordingProxy) addr() string { return p.ln.Addr().String() }

func (p *recordingProxy) forwardTo(target string) { p.target <- target }

func (p *recordingProxy) accept() {
	defer p.wg.Done()
	target := ""
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if target == "" {
			select {
			case target = <-p.target:
			case <-p.done:
				c.Close()
				return
			}
		}
		s, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		select {
		case <-p.done: // stop has closed the others
			c.Close()
			s.Close()
		default:
			p.conns = append(p.conns, c, s)
		}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(s, c, true)
		go p.pipe(c, s, false)
	}
}

// pipe copies from → to; record keeps a copy of the bytes.
func (p *recordingProxy) pipe(to, from net.Conn, record bool) {
	defer p.wg.Done()
	defer to.Close()
	defer from.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			if record {
				p.mu.Lock()
				p.sent.Write(buf[:n])
				p.mu.Unlock()
			}
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// stop closes the proxy and its connections, waits for its goroutines and
// returns what the clients sent.
func (p *recordingProxy) stop() string {
	p.once.Do(func() { close(p.done) })
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent.String()
}
