package livetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a throwaway certificate authority for tests of mutual TLS between
// live nodes: an ECDSA P-256 key and a self-signed CA certificate, valid
// from an hour ago for a day, held in memory. Its methods are safe for
// concurrent use.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

// NewCA returns a new CA named name; it fails t if key generation fails.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := template(name)
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// PEM returns the CA certificate, PEM-encoded: the --tls-ca file.
func (ca *CA) PEM() []byte { return ca.pem }

// NodeCert returns a certificate for node id signed by ca and its private
// key, both PEM-encoded: the --tls-cert and --tls-key files. The node ID is
// a URI subject alternative name crystalball://node/<id> (live.NodeURI;
// livetest cannot import live); the certificate is valid for client and
// server authentication.
func (ca *CA) NodeCert(t testing.TB, id uint64) (certPEM, keyPEM []byte) {
	t.Helper()
	return ca.Cert(t, fmt.Sprintf("crystalball://node/%d", id))
}

// Cert is NodeCert with the certificate's URI SANs given (none, several,
// or malformed ones), for tests of what a certificate may name.
func (ca *CA) Cert(t testing.TB, uris ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := template("node")
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	for _, s := range uris {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		tmpl.URIs = append(tmpl.URIs, u)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return pemPair(t, der, key)
}

// WriteNodeFiles writes node id's certificate, its key and ca's
// certificate into dir as n<id>.crt, n<id>.key and ca.crt, and returns
// their paths.
func (ca *CA) WriteNodeFiles(t testing.TB, dir string, id uint64) (certFile, keyFile, caFile string) {
	t.Helper()
	c, k := ca.NodeCert(t, id)
	certFile = filepath.Join(dir, fmt.Sprintf("n%d.crt", id))
	keyFile = filepath.Join(dir, fmt.Sprintf("n%d.key", id))
	caFile = filepath.Join(dir, "ca.crt")
	for _, f := range []struct {
		path string
		b    []byte
	}{{certFile, c}, {keyFile, k}, {caFile, ca.pem}} {
		if err := os.WriteFile(f.path, f.b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return certFile, keyFile, caFile
}

// serial numbers certificates; random, as RFC 5280 recommends.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}

func template(cn string) *x509.Certificate {
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
	}
}

// SelfSigned returns a self-signed certificate naming node id (a CA of
// its own, trusted by nobody else) and its key, PEM-encoded: a stranger's
// certificate.
func SelfSigned(t testing.TB, id uint64) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := template(fmt.Sprintf("self-signed n%d", id))
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	tmpl.URIs = []*url.URL{{Scheme: "crystalball", Host: "node", Path: fmt.Sprintf("/%d", id)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pemPair(t, der, key)
}

// pemPair encodes a certificate and its private key as PEM.
func pemPair(t testing.TB, der []byte, key any) (certPEM, keyPEM []byte) {
	t.Helper()
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
}
