package access

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHosts(t *testing.T) {
	t.Parallel()
	listed, err := ParseHosts("api.example.com, .internal.example, 192.0.2.10, [2001:db8::1]")
	require.NoError(t, err)
	cases := []struct {
		name  string
		hosts Hosts
		host  string
		want  bool
	}{
		{"OK: loopback name", LoopbackHosts(), "localhost:8080", true},
		{"OK: loopback subdomain", LoopbackHosts(), "app.localhost", true},
		{"OK: loopback address", LoopbackHosts(), "127.0.0.1:8080", true},
		{"OK: another loopback address", LoopbackHosts(), "127.8.9.1", true},
		{"OK: IPv6 loopback", LoopbackHosts(), "[::1]:8080", true},
		{"ErrRebinding: an attacker's name resolving to loopback", LoopbackHosts(), "evil.example:8080", false},
		{"ErrNotLoopback: a LAN address", LoopbackHosts(), "192.168.1.5:8080", false},
		{"ErrEmpty: no Host", LoopbackHosts(), "", false},
		{"ErrLookalike: localhost as a label of another name", LoopbackHosts(), "localhost.evil.example", false},
		{"OK: listed name, any case, any port", listed, "API.Example.com:443", true},
		{"OK: listed suffix", listed, "a.internal.example", true},
		{"ErrSuffix: the suffix's own parent", listed, "evilinternal.example", false},
		{"OK: listed address", listed, "192.0.2.10:8080", true},
		{"OK: listed IPv6 address", listed, "[2001:db8::1]:8080", true},
		{"ErrUnlisted", listed, "localhost", false},
		{"OK: any", AnyHost(), "whatever.example", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.hosts.Allows(tc.host))
		})
	}
	_, err = ParseHosts("https://api.example.com")
	require.Error(t, err)
	anyHosts, err := ParseHosts(" ")
	require.NoError(t, err)
	require.True(t, anyHosts.Allows("x.example"), "a blank list restricts nothing")
}

// The DNS rebinding reproduction of issue 10: a request naming an attacker's host is refused
// with a coded error before it reaches the handler.
func TestHostsMiddlewareRefusesRebinding(t *testing.T) {
	t.Parallel()
	reached := false
	h := LoopbackHosts().Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true }))
	r := httptest.NewRequest(http.MethodPost, "http://evil.example:8080/graphql", nil)
	r.Header.Set("Origin", "http://evil.example:8080")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	require.False(t, reached)
	require.Equal(t, http.StatusForbidden, w.Code)
	require.Equal(t, CodeHostNotAllowed, errorCode(t, w))
}

func TestIsLoopbackListen(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:8080": true, "[::1]:8080": true, "127.0.0.1:0": true,
		":8080": false, "0.0.0.0:8080": false, "[::]:8080": false, "192.168.1.5:8080": false, "garbage": false,
	} {
		require.Equal(t, want, IsLoopbackListen(addr), addr)
	}
}

func errorCode(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var body struct {
		Errors []struct{ Extensions map[string]any }
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
	require.Len(t, body.Errors, 1)
	code, _ := body.Errors[0].Extensions["code"].(string)
	return code
}
