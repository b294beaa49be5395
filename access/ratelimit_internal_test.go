package access

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRateLimit(t *testing.T) {
	t.Parallel()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	limit := NewRateLimit(nil, 1, 2)
	limit.now = func() time.Time { return clock }
	auth := testAuthenticator(t, "token-a-0123456789=wa,token-b-0123456789=wb")
	h := auth.HTTPMiddleware(limit.HTTPMiddleware(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {})))
	call := func(token string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/graphql", nil)
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}

	require.Equal(t, http.StatusOK, call("token-a-0123456789").Code)
	require.Equal(t, http.StatusOK, call("token-a-0123456789").Code)
	over := call("token-a-0123456789")
	require.Equal(t, http.StatusTooManyRequests, over.Code, "the burst of 2 is spent")
	require.Equal(t, "1", over.Header().Get("Retry-After"))
	var body struct {
		Errors []struct{ Extensions map[string]any }
	}
	require.NoError(t, json.Unmarshal(over.Body.Bytes(), &body))
	require.Equal(t, "RATE_LIMITED", body.Errors[0].Extensions["code"])

	require.Equal(t, http.StatusOK, call("token-b-0123456789").Code, "another token has its own bucket")
	require.Equal(t, http.StatusOK, call("").Code, "so has a client without a valid token")
	require.Equal(t, http.StatusOK, call("guess").Code)
	require.Equal(t, http.StatusTooManyRequests, call("guess2").Code, "that bucket is per address, whatever the token")

	clock = clock.Add(time.Second)
	require.Equal(t, http.StatusOK, call("token-a-0123456789").Code, "one request refilled after a second")
	require.Equal(t, http.StatusTooManyRequests, call("token-a-0123456789").Code)
}

func TestRateLimitOff(t *testing.T) {
	t.Parallel()
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {})
	h := NewRateLimit(nil, 0, 1).HTTPMiddleware(next)
	for range 5 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/graphql", nil))
		require.Equal(t, http.StatusOK, w.Code)
	}
}

// Behind a trusted proxy each client has its own bucket, named by X-Forwarded-For; from anyone
// else the header is ignored, so a client cannot get a fresh bucket by inventing addresses.
func TestRateLimitByForwardedClient(t *testing.T) {
	t.Parallel()
	proxies, err := ParseTrustedProxies("10.0.0.0/8")
	require.NoError(t, err)
	limit := NewRateLimit(proxies, 0.001, 1)
	h := limit.HTTPMiddleware(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	call := func(remote, forwarded string) int {
		r := httptest.NewRequest(http.MethodPost, "/graphql", nil)
		r.RemoteAddr = remote
		if forwarded != "" {
			r.Header.Set("X-Forwarded-For", forwarded)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	require.Equal(t, http.StatusOK, call("10.0.0.1:1", "203.0.113.7"))
	require.Equal(t, http.StatusTooManyRequests, call("10.0.0.2:1", "203.0.113.7"), "same client, another proxy")
	require.Equal(t, http.StatusOK, call("10.0.0.1:1", "203.0.113.8"), "another client behind the proxy")
	require.Equal(t, http.StatusOK, call("198.51.100.1:1", "203.0.113.9"))
	require.Equal(t, http.StatusTooManyRequests, call("198.51.100.1:1", "203.0.113.10"),
		"an untrusted peer's X-Forwarded-For is ignored")
}
