package access

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClientAddress(t *testing.T) {
	proxies, err := ParseTrustedProxies("10.0.0.0/8, 192.0.2.1, ::1")
	require.NoError(t, err)
	cases := []struct {
		name, remote, forwarded, want string
	}{
		{"OK: no proxy", "198.51.100.1:5000", "", "198.51.100.1"},
		{"OK: an untrusted peer's header is ignored", "198.51.100.1:5000", "203.0.113.1", "198.51.100.1"},
		{"OK: one trusted proxy", "10.1.2.3:5000", "203.0.113.1", "203.0.113.1"},
		{"OK: forged entries left of the real client are ignored", "10.1.2.3:5000", "1.2.3.4, 203.0.113.1", "203.0.113.1"},
		{"OK: a chain of trusted proxies", "10.1.2.3:5000", "203.0.113.1, 192.0.2.1, 10.9.9.9", "203.0.113.1"},
		{"OK: a garbled entry stops the walk", "10.1.2.3:5000", "203.0.113.1, garbage", "10.1.2.3"},
		{"OK: IPv6 loopback proxy", "[::1]:5000", "2001:db8::1", "2001:db8::1"},
		{"OK: every hop trusted names the last", "10.1.2.3:5000", "10.0.0.9", "10.0.0.9"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.remote
			if tc.forwarded != "" {
				r.Header.Set("X-Forwarded-For", tc.forwarded)
			}
			require.Equal(t, tc.want, proxies.ClientAddress(r))
		})
	}
	_, err = ParseTrustedProxies("10.0.0.0/33")
	require.Error(t, err)
	_, err = ParseTrustedProxies("proxy.example")
	require.Error(t, err)
}
