package access

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClientAddress(t *testing.T) {
	t.Parallel()
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

// ClientKey names a client by the valid credential Authenticator.HTTPMiddleware recorded, else
// by its address as ClientAddress resolves it: an unknown token, or none, is the address.
func TestClientKey(t *testing.T) {
	t.Parallel()
	proxies, err := ParseTrustedProxies("10.0.0.0/8")
	require.NoError(t, err)
	auth := testAuthenticator(t, "token-a-0123456789=demo")
	cases := []struct {
		name, authorization, remote, forwarded, want string
	}{
		{"OK: a valid token", "Bearer token-a-0123456789", "198.51.100.1:5000", "", "subject:token:" + testTokenName("token-a-0123456789")},
		{"OK: a valid token behind a proxy", "Bearer token-a-0123456789", "10.1.2.3:5000", "203.0.113.1", "subject:token:" + testTokenName("token-a-0123456789")},
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
			auth.HTTPMiddleware(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				got = proxies.ClientKey(r)
			})).ServeHTTP(httptest.NewRecorder(), r)
			require.Equal(t, tc.want, got)
		})
	}
	r := httptest.NewRequest("PUT", "/graphql", nil)
	r.Header.Set("Authorization", "Bearer token-a-0123456789")
	require.Equal(t, "addr:192.0.2.1", proxies.ClientKey(r), "without the token middleware nothing is authenticated")
}

// An operation's client is named from its context alone: its accepted credential's subject (a
// websocket's connection_init one replacing the upgrade request's), else its address.
func TestContextClientKey(t *testing.T) {
	t.Parallel()
	auth := testAuthenticator(t, "tok-a-0123456789=a")
	proxies, err := ParseTrustedProxies("10.0.0.0/8")
	require.NoError(t, err)
	keyOf := func(r *http.Request) (key string) {
		proxies.RecordClientAddress(auth.HTTPMiddleware(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
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
	r.Header.Set("Authorization", "Bearer tok-a-0123456789")
	withToken := keyOf(r)
	require.True(t, strings.HasPrefix(withToken, "subject:token:"), withToken)
	require.NotContains(t, withToken, "tok-a-0123456789", "the key names the subject, never the token")

	r.Header.Del("Authorization")
	var upgrade context.Context
	proxies.RecordClientAddress(auth.HTTPMiddleware(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		upgrade = r.Context()
	}))).ServeHTTP(httptest.NewRecorder(), r)
	ws, err := auth.WebsocketInit(upgrade, map[string]any{"authorization": "Bearer tok-a-0123456789"})
	require.NoError(t, err)
	require.Equal(t, withToken, ContextClientKey(ws), "a websocket's operations: connection_init's subject")
	require.Equal(t, "", ContextClientKey(context.Background()))
}
