package access

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// TrustedProxies are the networks whose X-Forwarded-For is believed: the proxies in front of
// forkgraph. Empty trusts none, and every client is its connection's remote address.
type TrustedProxies []netip.Prefix

// ParseTrustedProxies reads comma-separated CIDRs or addresses ("10.0.0.0/8,127.0.0.1").
func ParseTrustedProxies(spec string) (TrustedProxies, error) {
	var out TrustedProxies
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			addr, err := netip.ParseAddr(part)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q: want a CIDR or an address", part)
			}
			out = append(out, netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: %w", part, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

func (t TrustedProxies) trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range t {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ClientAddress is the address of the client behind r: the connection's remote address, or,
// when that is a trusted proxy, the right-most X-Forwarded-For entry that is not one (each proxy
// appends the address it saw, so entries left of the first untrusted one are the client's to
// forge). An unparsable entry stops the walk at the last address known.
func (t TrustedProxies) ClientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil || len(t) == 0 || !t.trusts(addr) {
		return host
	}
	hops := forwardedHops(r.Header.Values("X-Forwarded-For"))
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(hops[i])
		if err != nil {
			break
		}
		addr = hop.Unmap()
		if !t.trusts(addr) {
			break
		}
	}
	return addr.String()
}

// ClientKey names the client of r for a per-client bound, as RateLimit does: "subject:" and
// Principal.Key for a valid credential (the one Authenticator.HTTPMiddleware recorded in r's
// context), else "addr:<address>" (ClientAddress). An unknown token names no client of its own,
// so making up tokens earns no more room than sending none. transports.Reservations.ClientKey
// takes it.
func (t TrustedProxies) ClientKey(r *http.Request) string {
	if p, ok := principalOf(r.Context()); ok && p.Key() != "" {
		return "subject:" + p.Key()
	}
	return "addr:" + t.ClientAddress(r)
}

func forwardedHops(values []string) []string {
	var hops []string
	for _, v := range values {
		for _, hop := range strings.Split(v, ",") {
			if hop = strings.TrimSpace(hop); hop != "" {
				hops = append(hops, hop)
			}
		}
	}
	return hops
}
