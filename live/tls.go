package live

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"

	"go.uber.org/zap"
)

// Mutual TLS on the service transport.
//
// With RuntimeConfig.TLS set, every service-transport connection runs TLS
// 1.3 before the hello, and both ends present a certificate that must chain
// to the cluster CA (TLSConfig.CAs). A certificate names exactly one node
// ID, in a URI subject alternative name crystalball://node/<decimal ID>
// (NodeURI); the hello that follows must claim that same ID, so a node
// holding n3's certificate cannot speak as n2. Peers are named by node ID,
// not by host name: a certificate needs no DNS or IP SAN, and the dialler
// checks the CA chain and the node URI itself instead of the host name it
// dialled (the hello's ID is then checked against the peer it meant to
// reach, as without TLS).

// nodeURIPrefix starts the URI SAN that names a node in its certificate.
const nodeURIPrefix = "crystalball://node/"

// maxNodeURILen bounds a node URI: the prefix and 20 decimal digits.
const maxNodeURILen = len(nodeURIPrefix) + 20

// MaxPEMFileSize bounds each file LoadTLSConfig reads, in bytes (1 MiB: a
// certificate chain or a CA bundle is a few kilobytes).
const MaxPEMFileSize = 1 << 20

// ErrCertificate is wrapped by every error about this node's certificate,
// key or CA bundle (unreadable, malformed, not naming exactly one node,
// naming another node than RuntimeConfig.ID, not signed by the CA) and
// about a peer's certificate that does not name a node.
var ErrCertificate = errors.New("live: bad certificate")

// TLSConfig is the mutual TLS configuration of a node's service
// transport (RuntimeConfig.TLS). LoadTLSConfig and ParseTLSConfig build
// one from PEM files; a hand-built one must set both fields. A runtime
// reads it and never modifies it. Validity periods are checked against the
// wall clock when the runtime is created and at every handshake; a
// renewed certificate takes effect in a new runtime (a restarted node).
type TLSConfig struct {
	// Certificate is this node's certificate chain (leaf first) and
	// private key. The leaf must name RuntimeConfig.ID as its only node
	// URI (NodeURI) and be valid for TLS client and server authentication
	// (no extended key usage, or both). Required.
	Certificate tls.Certificate
	// CAs are the cluster's certificate authorities: a peer's certificate
	// must chain to one of them. Required.
	CAs *x509.CertPool
}

// NodeURI returns the URI subject alternative name that binds a
// certificate to node id: "crystalball://node/7" for n7.
func NodeURI(id node.ID) string { return nodeURIPrefix + strconv.FormatUint(uint64(id), 10) }

// parseNodeURI parses NodeURI's form: the prefix and a positive decimal ID
// without sign or leading zeros, so that one ID has one spelling.
func parseNodeURI(s string) (node.ID, error) {
	digits, ok := strings.CutPrefix(s, nodeURIPrefix)
	if !ok || len(s) > maxNodeURILen || !positiveDecimal.MatchString(digits) {
		return node.None, fmt.Errorf("%w: URI %s is not %s<positive ID>", ErrCertificate, quotePrefix(s), nodeURIPrefix)
	}
	v, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return node.None, fmt.Errorf("%w: URI %s: %w", ErrCertificate, quotePrefix(s), err)
	}
	return node.ID(v), nil
}

// positiveDecimal matches a positive decimal number without sign or
// leading zeros.
var positiveDecimal = regexp.MustCompile(`^[1-9][0-9]*$`)

// quotePrefix quotes at most the first 32 bytes of s: errors about
// untrusted input stay short.
func quotePrefix(s string) string {
	const n = 32
	if len(s) <= n {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:n]) + "..."
}

// CertificateNodeID returns the node ID cert names: its one URI SAN with
// the scheme crystalball (NodeURI). A certificate with none, with several,
// or with a malformed one names no node (an error wrapping ErrCertificate).
func CertificateNodeID(cert *x509.Certificate) (node.ID, error) {
	id := node.None
	for _, u := range cert.URIs {
		if u.Scheme != "crystalball" {
			continue
		}
		got, err := parseNodeURI(u.String())
		if err != nil {
			return node.None, err
		}
		if id != node.None {
			return node.None, fmt.Errorf("%w: certificate names several nodes (%v, %v)", ErrCertificate, id, got)
		}
		id = got
	}
	if id == node.None {
		return node.None, fmt.Errorf("%w: certificate has no %s<ID> URI SAN", ErrCertificate, nodeURIPrefix)
	}
	return id, nil
}

// LoadTLSConfig reads a node's certificate chain, its private key and the
// cluster CA bundle from PEM files (crystalball node's --tls-cert,
// --tls-key and --tls-ca) and parses them with ParseTLSConfig. A file
// larger than MaxPEMFileSize is an error, read no further.
func LoadTLSConfig(certFile, keyFile, caFile string) (*TLSConfig, error) {
	var b [3][]byte
	for i, f := range []string{certFile, keyFile, caFile} {
		var err error
		if b[i], err = readBounded(f, MaxPEMFileSize); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCertificate, err)
		}
	}
	return ParseTLSConfig(b[0], b[1], b[2])
}

// readBounded reads the file at path, failing if it holds more than limit
// bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return b, nil
}

// ParseTLSConfig builds a TLSConfig from PEM: a certificate chain (leaf
// first), its private key, and a CA bundle of one or more CERTIFICATE
// blocks. The leaf must name one node (CertificateNodeID) and chain to the
// bundle. Errors wrap ErrCertificate.
func ParseTLSConfig(certPEM, keyPEM, caPEM []byte) (*TLSConfig, error) {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%w: certificate and key: %w", ErrCertificate, err)
	}
	pool, err := parseCAs(caPEM)
	if err != nil {
		return nil, err
	}
	c := &TLSConfig{Certificate: cert, CAs: pool}
	if _, err := c.ownID(); err != nil {
		return nil, err
	}
	return c, nil
}

// parseCAs parses a CA bundle, refusing what x509.CertPool's
// AppendCertsFromPEM would skip silently: a block of another type, a
// certificate that does not parse, trailing garbage, an empty bundle.
func parseCAs(b []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	n := 0
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("%w: CA bundle: PEM block %d is %s, want CERTIFICATE", ErrCertificate, n+1, quotePrefix(blk.Type))
		}
		cert, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: CA bundle: certificate %d: %w", ErrCertificate, n+1, err)
		}
		pool.AddCert(cert)
		n++
	}
	if len(strings.TrimSpace(string(b))) != 0 {
		return nil, fmt.Errorf("%w: CA bundle: %d bytes after the last PEM block are not PEM", ErrCertificate, len(b))
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: CA bundle holds no certificate", ErrCertificate)
	}
	return pool, nil
}

// ownID checks c as a node's configuration (both fields set, the leaf
// names one node and chains to the CAs) and returns the node its
// certificate names.
func (c *TLSConfig) ownID() (node.ID, error) {
	if c.CAs == nil {
		return node.None, fmt.Errorf("%w: no CA pool", ErrCertificate)
	}
	if len(c.Certificate.Certificate) == 0 || c.Certificate.PrivateKey == nil {
		return node.None, fmt.Errorf("%w: no certificate or private key", ErrCertificate)
	}
	chain, err := parseChain(c.Certificate.Certificate)
	if err != nil {
		return node.None, err
	}
	if err := verifyChain(chain, c.CAs, x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth); err != nil {
		return node.None, fmt.Errorf("%w: this node's certificate: %w", ErrCertificate, err)
	}
	return CertificateNodeID(chain[0])
}

func parseChain(ders [][]byte) ([]*x509.Certificate, error) {
	chain := make([]*x509.Certificate, len(ders))
	for i, der := range ders {
		var err error
		if chain[i], err = x509.ParseCertificate(der); err != nil {
			return nil, fmt.Errorf("%w: certificate %d of the chain: %w", ErrCertificate, i+1, err)
		}
	}
	return chain, nil
}

// verifyChain checks that chain's leaf chains to roots (through the
// chain's other certificates) and may be used for each of the usages.
func verifyChain(chain []*x509.Certificate, roots *x509.CertPool, usages ...x509.ExtKeyUsage) error {
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	for _, u := range usages {
		if _, err := chain[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{u}}); err != nil {
			return err
		}
	}
	return nil
}

// validate checks RuntimeConfig.TLS for a node with ID id; nil is valid.
func (c *TLSConfig) validate(id node.ID) error {
	if c == nil {
		return nil
	}
	got, err := c.ownID()
	if err == nil && got != id {
		err = fmt.Errorf("%w: the certificate names %v, not this node (%v)", ErrCertificate, got, id)
	}
	if err != nil {
		return tlsFieldError{err}
	}
	return nil
}

// tlsFieldError is an error of RuntimeConfig.TLS: Validate's prefix in
// place of the package's (its message would say "live: " twice), the
// error's sentinels kept.
type tlsFieldError struct{ err error }

func (e tlsFieldError) Error() string {
	return "live: RuntimeConfig.TLS: " + strings.TrimPrefix(e.err.Error(), "live: ")
}

func (e tlsFieldError) Unwrap() error { return e.err }

// config returns the crypto/tls configuration of one end of a connection.
// Both ends verify the peer by verifyPeer, the client with InsecureSkipVerify
// because it must not check a host name (peers are named by node ID).
func (c *TLSConfig) config(server bool) *tls.Config {
	tc := &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{c.Certificate},
	}
	if server {
		tc.ClientAuth = tls.RequireAnyClientCert
		tc.SessionTicketsDisabled = true // one config per connection: nothing to resume
		tc.VerifyConnection = c.verifyPeer(x509.ExtKeyUsageClientAuth)
	} else {
		tc.InsecureSkipVerify = true
		tc.VerifyConnection = c.verifyPeer(x509.ExtKeyUsageServerAuth)
	}
	return tc
}

// verifyPeer checks the peer's certificate: it chains to the CAs, allows
// usage, and names a node.
func (c *TLSConfig) verifyPeer(usage x509.ExtKeyUsage) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return fmt.Errorf("%w: the peer presented no certificate", ErrCertificate)
		}
		if err := verifyChain(cs.PeerCertificates, c.CAs, usage); err != nil {
			return fmt.Errorf("%w: peer: %w", ErrCertificate, err)
		}
		_, err := CertificateNodeID(cs.PeerCertificates[0])
		return err
	}
}

// tlsConn is a TLS connection whose Close closes the socket at once,
// without a close_notify alert: sending one may block for up to crypto/tls's
// 5s alert deadline, and a connection is closed from the core goroutine
// (a full send queue). The peer reads a clean end of stream all the same.
type tlsConn struct{ *tls.Conn }

func (c tlsConn) Close() error { return c.NetConn().Close() }

// secureDial wraps a dialled socket in TLS when the runtime has a
// TLSConfig, and returns it unchanged otherwise. The handshake runs with
// the first write (the hello), under the deadline the caller sets.
func (t *transport) secureDial(conn net.Conn) net.Conn {
	if t.cfg.TLS == nil {
		return conn
	}
	return tlsConn{tls.Client(conn, t.cfg.TLS.config(false))}
}

// secureAccept runs the server side of the TLS handshake on an accepted
// socket when the runtime has a TLSConfig, under the deadline the caller
// set, and returns the connection to read the hello from. A peer that
// does not complete it with a certificate of the cluster is refused with
// an error wrapping ErrHandshake (so it is counted in FramesRejected).
func (t *transport) secureAccept(conn net.Conn) (net.Conn, error) {
	if t.cfg.TLS == nil {
		return conn, nil
	}
	tc := tls.Server(conn, t.cfg.TLS.config(true))
	if err := tc.HandshakeContext(t.ctx); err != nil {
		return conn, fmt.Errorf("%w: TLS: %w", ErrHandshake, err)
	}
	return tlsConn{tc}, nil
}

// bindHello checks, on a TLS connection, that the peer's hello claims the
// node ID its certificate names; without TLS there is nothing to check.
func bindHello(conn net.Conn, h hello) error {
	tc, ok := conn.(tlsConn)
	if !ok {
		return nil
	}
	certs := tc.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return fmt.Errorf("%w: no peer certificate", ErrHandshake)
	}
	id, err := CertificateNodeID(certs[0])
	if err != nil {
		return fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	if h.id != id {
		return fmt.Errorf("%w: hello claims %v, the peer's certificate names %v", ErrHandshake, h.id, id)
	}
	return nil
}

// warnInsecure logs, at start, what of the node's traffic travels in the
// clear: plaintext is for local experiments only.
func warnInsecure(cfg RuntimeConfig, log *zap.Logger) {
	if cfg.TLS == nil {
		log.Warn("live: the service transport is plaintext and unauthenticated (no TLS configured): any host that reaches it can speak as any node")
	}
	if !cfg.Gossip.encrypted() {
		log.Warn("live: gossip is unencrypted and unauthenticated (no gossip key configured): any host that reaches it can join the cluster")
	}
}
