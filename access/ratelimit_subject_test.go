package access_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/internal/testissuer"
)

// Rate limits are per subject: two tokens of one user share a bucket, another user has their own,
// so one user's burst throttles that user only; a made-up token is its sender's address.
func TestRateLimitPerSubject(t *testing.T) {
	t.Parallel()
	iss := testissuer.New(t)
	v, err := access.NewJWTVerifier(access.JWTConfig{Issuer: iss.URL(), Audience: testissuer.Audience})
	require.NoError(t, err)
	auth := access.NewAuthenticator(access.AuthConfig{JWT: v})
	limit := access.NewRateLimit(nil, 0.001, 2) // no refill within the test
	h := auth.HTTPMiddleware(limit.HTTPMiddleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	call := func(token string) int {
		r := httptest.NewRequest(http.MethodPost, "/graphql", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	alice1 := iss.Mint("rsa-1", testissuer.Claims{Subject: "alice"})
	alice2 := iss.Mint("ec-1", testissuer.Claims{Subject: "alice", Scope: "read"})
	bob := iss.Mint("ed-1", testissuer.Claims{Subject: "bob"})
	require.Equal(t, http.StatusOK, call(alice1))
	require.Equal(t, http.StatusOK, call(alice2))
	require.Equal(t, http.StatusTooManyRequests, call(alice1), "alice's two tokens share her bucket")
	require.Equal(t, http.StatusOK, call(bob), "bob is not throttled by alice")
	require.Equal(t, http.StatusOK, call("made.up.token"))
	require.Equal(t, http.StatusOK, call("another.made.up"))
	require.Equal(t, http.StatusTooManyRequests, call("third.made.up"), "made-up tokens share their address's bucket")
}
