package access

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOriginsMiddleware(t *testing.T) {
	t.Parallel()
	origins, err := ParseOrigins("https://app.example.com, http://localhost:5173")
	require.NoError(t, err)
	reached := 0
	h := origins.Middleware(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { reached++ }))
	call := func(method, origin string, header ...string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, "http://127.0.0.1:8080/graphql", nil)
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}

	t.Run("OK: no Origin is not a browser request", func(t *testing.T) {
		before := reached
		w := call(http.MethodPost, "")
		require.Equal(t, before+1, reached)
		require.Empty(t, w.Header().Get("Access-Control-Allow-Origin"))
	})
	t.Run("OK: the server's own origin", func(t *testing.T) {
		before := reached
		call(http.MethodPost, "http://127.0.0.1:8080")
		require.Equal(t, before+1, reached)
	})
	t.Run("OK: a listed origin gets CORS headers", func(t *testing.T) {
		before := reached
		w := call(http.MethodPost, "https://app.example.com")
		require.Equal(t, before+1, reached)
		require.Equal(t, "https://app.example.com", w.Header().Get("Access-Control-Allow-Origin"))
		require.Contains(t, w.Header().Values("Vary"), "Origin")
	})
	t.Run("OK: a listed origin's preflight is answered, not forwarded", func(t *testing.T) {
		before := reached
		w := call(http.MethodOptions, "http://localhost:5173", "Access-Control-Request-Method", "POST",
			"Access-Control-Request-Headers", "content-type, authorization")
		require.Equal(t, before, reached)
		require.Equal(t, http.StatusNoContent, w.Code)
		require.Equal(t, "http://localhost:5173", w.Header().Get("Access-Control-Allow-Origin"))
		require.Contains(t, w.Header().Get("Access-Control-Allow-Methods"), "POST")
		require.Equal(t, "content-type, authorization", w.Header().Get("Access-Control-Allow-Headers"))
	})
	t.Run("OK: graphql-sse single-connection mode's PUT and DELETE may be preflighted", func(t *testing.T) {
		w := call(http.MethodOptions, "http://localhost:5173", "Access-Control-Request-Method", "PUT")
		require.Equal(t, http.StatusNoContent, w.Code)
		for _, method := range []string{"PUT", "DELETE"} {
			require.Contains(t, w.Header().Get("Access-Control-Allow-Methods"), method)
		}
		require.Contains(t, w.Header().Get("Access-Control-Allow-Headers"), "X-GraphQL-Event-Stream-Token")
	})
	// The server's own origin is its Host with the port: a page on another port of the same
	// host (the request's Host is 127.0.0.1:8080) is another origin (issue 21: a check that
	// compared host names only survived every test).
	for name, origin := range map[string]string{
		"ErrOtherOrigin": "https://evil.example", "ErrOtherPort": "https://app.example.com:8443",
		"ErrOtherScheme": "http://app.example.com", "ErrNullOrigin": "null",
		"ErrSameHostOtherPort": "http://127.0.0.1:3000", "ErrSameHostDefaultPort": "http://127.0.0.1",
		"ErrSameHostOtherPortTLS": "https://127.0.0.1:8443",
	} {
		t.Run(name, func(t *testing.T) {
			for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodOptions} {
				before := reached
				w := call(method, origin, "Access-Control-Request-Method", "POST")
				require.Equal(t, before, reached, method)
				require.Equal(t, http.StatusForbidden, w.Code, method)
				require.Empty(t, w.Header().Get("Access-Control-Allow-Origin"), method)
				require.Equal(t, CodeOriginNotAllowed, errorCode(t, w), method)
			}
		})
	}
	for _, bad := range []string{"app.example.com", "https://app.example.com/path", "ftp://x.example", "https://"} {
		_, err := ParseOrigins(bad)
		require.Error(t, err, bad)
	}
}
