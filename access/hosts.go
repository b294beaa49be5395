package access

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Hosts is the Host allow-list, the defence against DNS rebinding: a page on an attacker's name
// that resolves to 127.0.0.1 sends that name as Host, so refusing unknown names keeps it from
// reading a server on loopback. Names compare case-insensitively and without the port; an
// entry ".example.com" allows every subdomain of example.com. The zero value allows no host;
// ParseHosts of a blank spec and AnyHost allow every one.
type Hosts struct {
	any      bool
	loopback bool
	names    map[string]bool
	suffixes []string
}

// AnyHost allows every Host header.
func AnyHost() Hosts { return Hosts{any: true} }

// LoopbackHosts allows localhost, its subdomains and loopback addresses only: open mode's
// default, since nothing but the machine itself should reach an unauthenticated server.
func LoopbackHosts() Hosts { return Hosts{loopback: true} }

// ParseHosts reads a comma-separated allow-list: "*" (any host), "loopback" (LoopbackHosts's
// names), host names, ".suffix" entries and IP addresses. A blank spec allows any host.
func ParseHosts(spec string) (Hosts, error) {
	h := Hosts{names: map[string]bool{}}
	empty := true
	for _, entry := range strings.Split(spec, ",") {
		entry = strings.ToLower(strings.TrimSpace(entry))
		switch {
		case entry == "":
			continue
		case entry == "*":
			h.any = true
		case entry == "loopback":
			h.loopback = true
		case strings.HasPrefix(entry, "."):
			h.suffixes = append(h.suffixes, entry)
		case strings.ContainsAny(entry, "/@ ") || strings.Contains(entry, "://"):
			return Hosts{}, fmt.Errorf("allowed host %q: want a host name or address without scheme or path", entry)
		default:
			h.names[strings.Trim(entry, "[]")] = true
		}
		empty = false
	}
	if empty {
		return Hosts{any: true}, nil
	}
	return h, nil
}

// Allows reports whether a Host header value (name or address, with or without a port) is on
// the list.
func (h Hosts) Allows(hostHeader string) bool {
	if h.any {
		return true
	}
	name := hostName(hostHeader)
	if name == "" {
		return false
	}
	if h.names[name] || h.loopback && isLoopbackName(name) {
		return true
	}
	for _, s := range h.suffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// Middleware answers 403 HOST_NOT_ALLOWED to a request whose Host is not on the list.
func (h Hosts) Middleware(next http.Handler) http.Handler {
	if h.any {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.Allows(r.Host) {
			writeError(w, http.StatusForbidden, &Error{Code: CodeHostNotAllowed, Message: fmt.Sprintf(
				"host %q is not served here; add it to -allowed-hosts (FORKGRAPH_ALLOWED_HOSTS)", r.Host)})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostName lowercases a Host header and drops its port and an IPv6 literal's brackets.
func hostName(hostHeader string) string {
	host := strings.ToLower(strings.TrimSpace(hostHeader))
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.TrimSuffix(strings.Trim(host, "[]"), ".")
}

func isLoopbackName(name string) bool {
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	addr, err := netip.ParseAddr(name)
	return err == nil && addr.Unmap().IsLoopback()
}

// IsLoopbackListen reports whether a listen address (host:port) accepts connections from this
// machine only: a loopback address or localhost. ":8080" and "0.0.0.0:8080" listen everywhere.
func IsLoopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	return isLoopbackName(strings.ToLower(host))
}
