package access

import (
	"context"
	"net/http"
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

// ClientKey names a client by the valid token Tokens.HTTPMiddleware recorded, else by its
// address as ClientAddress resolves it: an unknown token, or none, is the address.
func TestClientKey(t *testing.T) {
	proxies, err := ParseTrustedProxies("10.0.0.0/8")
	require.NoError(t, err)
	tokens := Tokens{"tokA": "demo"}
	cases := []struct {
		name, authorization, remote, forwarded, want string
	}{
		{"OK: a valid token", "Bearer tokA", "198.51.100.1:5000", "", "token:tokA"},
		{"OK: a valid token behind a proxy", "Bearer tokA", "10.1.2.3:5000", "203.0.113.1", "token:tokA"},
		{"OK: an unknown token is the address", "Bearer made-up", "198.51.100.1:5000", "", "addr:198.51.100.1"},
		{"OK: another unknown token is the same address", "Bearer made-up-2", "198.51.100.1:5000", "", "addr:198.51.100.1"},
		{"OK: no token", "", "198.51.100.1:5000", "", "addr:198.51.100.1"},
		{"OK: behind a trusted proxy, the forwarded client", "Bearer made-up", "10.1.2.3:5000", "203.0.113.1", "addr:203.0.113.1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("PUT", "/graphql", nil)
			r.RemoteAddr = tc.remote
			if tc.authorization != "" {
				r.Header.Set("Authorization", tc.authorization)
			}
			if tc.forwarded != "" {
				r.Header.Set("X-Forwarded-For", tc.forwarded)
			}
			var got string
			tokens.HTTPMiddleware(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				got = proxies.ClientKey(r)
			})).ServeHTTP(httptest.NewRecorder(), r)
			require.Equal(t, tc.want, got)
		})
	}
	r := httptest.NewRequest("PUT", "/graphql", nil)
	r.Header.Set("Authorization", "Bearer tokA")
	require.Equal(t, "addr:192.0.2.1", proxies.ClientKey(r), "without the token middleware nothing is authenticated")
}

// An operation's client is named from its context alone: its valid token (a websocket's
// connection_init one replacing the upgrade request's), else its address.
func TestContextClientKey(t *testing.T) {
	tokens := Tokens{"tok-a": "a"}
	proxies, err := ParseTrustedProxies("10.0.0.0/8")
	require.NoError(t, err)
	keyOf := func(r *http.Request) (key string) {
		proxies.RecordClientAddress(tokens.HTTPMiddleware(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			key = ContextClientKey(r.Context())
		}))).ServeHTTP(httptest.NewRecorder(), r)
		return key
	}
	r := httptest.NewRequest("POST", "/graphql", nil)
	r.RemoteAddr = "10.1.2.3:5000"
	r.Header.Set("X-Forwarded-For", "203.0.113.9")
	require.Equal(t, "addr:203.0.113.9", keyOf(r), "no token: the client address")
	r.Header.Set("Authorization", "Bearer nope")
	require.Equal(t, "addr:203.0.113.9", keyOf(r), "an unknown token names no client of its own")
	r.Header.Set("Authorization", "Bearer tok-a")
	require.Equal(t, "token:tok-a", keyOf(r))

	r.Header.Del("Authorization")
	var upgrade context.Context
	proxies.RecordClientAddress(tokens.HTTPMiddleware(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		upgrade = r.Context()
	}))).ServeHTTP(httptest.NewRecorder(), r)
	ws, err := tokens.WebsocketInit(upgrade, map[string]any{"authorization": "Bearer tok-a"})
	require.NoError(t, err)
	require.Equal(t, "token:tok-a", ContextClientKey(ws), "a websocket's operations: connection_init's token")
	require.Equal(t, "", ContextClientKey(context.Background()))
}
