package status

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Which requests the server answers, whoever sends them. A page on
// another site can make a browser on the node's host send requests to
// the status port: a POST straight from the page (cross-site request
// forgery: the audit's POST /snapshot with a foreign Origin got 202), or,
// with DNS rebinding, any request under the page's own origin (a name the
// attacker resolves to 127.0.0.1: the audit's GET /status with any Host
// got 200). So the server answers only requests whose Host is an IP
// literal, "localhost" (or a name under it) or one of Config.AllowedHosts
// — a rebinding attack always uses a name of the attacker's —, and a
// POST only when its Origin, if it has one, is the server's own (same
// scheme-less host and port as Host) and its Sec-Fetch-Site, if any, is
// same-origin or none. Everything else is 403 (421 for a wrong Host).

// checkAllowedHosts validates Config.AllowedHosts: names without a port,
// whitespace or a scheme.
func checkAllowedHosts(hosts []string) error {
	for _, h := range hosts {
		if h == "" || strings.ContainsAny(h, " \t\r\n/:@") {
			return fmt.Errorf("status: Config.AllowedHosts entry %q: want a host name without port or scheme", h)
		}
	}
	return nil
}

// allowedHost reports whether hostport (a Host header's or an Origin's
// host, port optional) names this server: an IP literal, localhost, or an
// allowed name.
func allowedHost(hostport string, allowed []string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "" {
		return false
	}
	if net.ParseIP(host) != nil || host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	for _, a := range allowed {
		if strings.EqualFold(strings.TrimSuffix(a, "."), host) {
			return true
		}
	}
	return false
}

// guardHosts wraps the server's handler with the rules above.
func (s *Server) guardHosts(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowedHost(r.Host, s.cfg.AllowedHosts) {
			s.http.hostsRefused.Add(1)
			writeError(w, http.StatusMisdirectedRequest, "status: this server does not answer to that Host (an IP address, localhost, or --http-host names only)")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !sameOrigin(r) {
			s.http.hostsRefused.Add(1)
			writeError(w, http.StatusForbidden, "status: a cross-site request may not change the node")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether r, by its Origin and Sec-Fetch-Site headers,
// comes from the server's own pages or from no page at all (curl sends
// neither header).
func sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}
