package status

import (
	"crypto/subtle"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
)

// Who may change a node. GET endpoints only read, so anyone who reaches the
// HTTP port may use them; a POST starts work on the node (a gather sends
// messages to every neighbour), so it needs Config.Token as a bearer token
// or, without a token, a client on a loopback address: a status port
// exposed by mistake is then read-only to the network.

// DefaultMaxHeaderBytes is Config.MaxHeaderBytes's default.
const DefaultMaxHeaderBytes = 16 << 10

// MaxTokenLen bounds Config.Token.
const MaxTokenLen = 4096

// guard wraps a state-changing handler with the access rule above.
func (s *Server) guard(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Token == "" {
			if !isLoopback(r.RemoteAddr) {
				writeError(w, http.StatusForbidden, "status: POST is allowed from loopback only (the node has no --http-token-file)")
				return
			}
			h(w, r)
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="crystalball"`)
			writeError(w, http.StatusUnauthorized, "status: POST needs the node's bearer token")
			return
		}
		h(w, r)
	}
}

// isLoopback reports whether a request's RemoteAddr is a loopback address.
func isLoopback(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ReadTokenFile reads a bearer token for Config.Token from path: the file's
// content without surrounding whitespace, which must be non-empty, at most
// MaxTokenLen bytes and free of inner whitespace. It reads at most
// MaxTokenLen+1 KiB, whatever the file's size.
func ReadTokenFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("status: token file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxTokenLen+1024))
	if err != nil {
		return "", fmt.Errorf("status: token file %s: %w", path, err)
	}
	tok := strings.TrimSpace(string(b))
	switch {
	case tok == "":
		return "", fmt.Errorf("status: token file %s is empty", path)
	case len(tok) > MaxTokenLen:
		return "", fmt.Errorf("status: token file %s: token longer than %d bytes", path, MaxTokenLen)
	case strings.ContainsAny(tok, " \t\r\n"):
		return "", fmt.Errorf("status: token file %s: the token contains whitespace", path)
	}
	return tok, nil
}
