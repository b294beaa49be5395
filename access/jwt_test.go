package access_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/internal/testissuer"
)

// clock is a settable time for the verifier and the tokens it checks.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newClock() *clock { return &clock{now: time.Now().Truncate(time.Second)} }

func newVerifier(t *testing.T, iss *testissuer.Issuer, clk *clock, edit func(*access.JWTConfig)) *access.JWTVerifier {
	t.Helper()
	cfg := access.JWTConfig{Issuer: iss.URL(), Audience: testissuer.Audience, ClockSkew: 5 * time.Second, Now: clk.Now}
	if edit != nil {
		edit(&cfg)
	}
	v, err := access.NewJWTVerifier(cfg)
	require.NoError(t, err)
	return v
}

// reasonOf is the extensions.reason of an access refusal.
func reasonOf(t *testing.T, err error) string {
	t.Helper()
	var e *access.Error
	require.True(t, errors.As(err, &e), "want an *access.Error, got %v", err)
	require.Equal(t, "UNAUTHENTICATED", e.Code)
	reason, _ := e.Extensions()["reason"].(string)
	return reason
}

// Every case of issue 22's list, against a real issuer (discovery + JWKS over HTTP).
func TestJWTVerification(t *testing.T) {
	t.Parallel()
	iss := testissuer.New(t)
	clk := newClock()
	v := newVerifier(t, iss, clk, nil)
	ctx := context.Background()
	base := testissuer.Claims{Subject: "alice", Scope: "openid read fork", Workspaces: []string{"demo", "lisbon"}, Now: clk.Now()}
	with := func(edit func(*testissuer.Claims)) testissuer.Claims {
		c := base
		edit(&c)
		return c
	}

	for _, kid := range []string{"rsa-1", "ec-1", "ed-1"} {
		t.Run("OK: signed with "+kid, func(t *testing.T) {
			p, err := v.Verify(ctx, iss.Mint(kid, base))
			require.NoError(t, err)
			require.Equal(t, "alice", p.Subject)
			require.Equal(t, access.SourceJWT, p.Source)
			require.Equal(t, []string{"demo", "lisbon"}, p.Workspaces)
			require.Equal(t, access.ScopesOf(access.ScopeRead, access.ScopeFork), p.Scopes, "openid is not a scope of forkgraph")
			require.Equal(t, clk.Now().Add(time.Hour), p.ExpiresAt)
			require.Equal(t, clk.Now().Add(time.Hour+5*time.Second), p.ValidUntil(), "exp plus the clock skew")
		})
	}

	refused := []struct {
		name, token, reason string
	}{
		{"expired", iss.Mint("rsa-1", with(func(c *testissuer.Claims) { c.ExpiresIn = -time.Minute })), access.ReasonTokenExpired},
		{"not yet valid", iss.Mint("rsa-1", with(func(c *testissuer.Claims) { c.NotBefore = clk.Now().Add(time.Minute) })), access.ReasonTokenNotYetValid},
		{"issued in the future", iss.Mint("rsa-1", with(func(c *testissuer.Claims) { c.IssuedAt = clk.Now().Add(time.Minute) })), access.ReasonTokenNotYetValid},
		{"wrong issuer", iss.Mint("rsa-1", with(func(c *testissuer.Claims) { c.Issuer = "https://evil.example" })), access.ReasonWrongIssuer},
		{"wrong audience", iss.Mint("rsa-1", with(func(c *testissuer.Claims) { c.Audience = []string{"https://other.example/api"} })), access.ReasonWrongAudience},
		{"alg none", iss.Unsigned(base), access.ReasonInvalidToken},
		{"HS256 keyed with the RSA public key", iss.HS256WithPublicKey(base), access.ReasonInvalidToken},
		{"tampered signature", testissuer.Tampered(iss.Mint("rsa-1", base), "workspaces", []string{"someone-elses"}), access.ReasonInvalidSignature},
		{"no workspace claim", iss.Mint("ec-1", with(func(c *testissuer.Claims) { c.Workspaces = testissuer.NoWorkspaces })), access.ReasonClaimMissing},
		{"a workspace that is not an id", iss.Mint("ec-1", with(func(c *testissuer.Claims) { c.Workspaces = []string{" demo"} })), access.ReasonClaimMissing},
		{"no subject", iss.Mint("ed-1", with(func(c *testissuer.Claims) { c.Subject = testissuer.NoSubject })), access.ReasonClaimMissing},
		{"a sub that is not an id", iss.Mint("ed-1", with(func(c *testissuer.Claims) { c.Subject = "eve\nINFO forged log line" })), access.ReasonClaimMissing},
		{"not a JWT", "a.b.c", access.ReasonInvalidToken},
		{"a 100 KB token", strings.Repeat("a", 100<<10), access.ReasonTokenTooLarge},
	}
	for _, tc := range refused {
		t.Run("refused: "+tc.name, func(t *testing.T) {
			_, err := v.Verify(ctx, tc.token)
			require.Equal(t, tc.reason, reasonOf(t, err), "%v", err)
		})
	}

	t.Run("a token keeps working within the clock skew, then not", func(t *testing.T) {
		token := iss.Mint("rsa-1", with(func(c *testissuer.Claims) { c.ExpiresIn = time.Second }))
		local := newClock()
		local.now = clk.Now()
		v := newVerifier(t, iss, local, nil)
		local.Add(3 * time.Second)
		_, err := v.Verify(ctx, token)
		require.NoError(t, err, "1 s past exp, within the 5 s skew")
		local.Add(5 * time.Second)
		_, err = v.Verify(ctx, token)
		require.Equal(t, access.ReasonTokenExpired, reasonOf(t, err), "a remembered verification expires too")
	})
}

// A 100 KB token costs a length check: nothing is decoded, no key is fetched.
func TestJWTSizeCapIsCheap(t *testing.T) {
	iss := testissuer.New(t)
	v := newVerifier(t, iss, newClock(), nil)
	huge := iss.Mint("rsa-1", testissuer.Claims{Extra: map[string]any{"padding": strings.Repeat("x", 100<<10)}})
	_, err := v.Verify(context.Background(), huge)
	require.Equal(t, access.ReasonTokenTooLarge, reasonOf(t, err))
	require.Zero(t, iss.JWKSFetches()+iss.DiscoveryFetches())
	allocs := testing.AllocsPerRun(20, func() { _, _ = v.Verify(context.Background(), huge) })
	require.LessOrEqual(t, allocs, 10.0, "the refusal allocates its error only (a few more under the race detector)")
}

// Keys are cached by kid: one fetch serves every later token; an unknown kid refreshes once,
// rate-limited, which picks up a rotation; a withdrawn key stops verifying after a refresh.
func TestJWTKeyRotation(t *testing.T) {
	t.Parallel()
	iss := testissuer.New(t)
	clk := newClock()
	v := newVerifier(t, iss, clk, func(c *access.JWTConfig) { c.Keys.UnknownKeyRefresh = 10 * time.Second })
	ctx := context.Background()
	claims := testissuer.Claims{Subject: "bob", Now: clk.Now()}

	for range 5 {
		_, err := v.Verify(ctx, iss.Mint("rsa-1", claims))
		require.NoError(t, err)
	}
	require.Equal(t, int64(1), iss.DiscoveryFetches())
	require.Equal(t, int64(1), iss.JWKSFetches(), "five tokens, one fetch")

	next := iss.NewKey(jose.RS256) // rsa-2, not published yet
	clk.Add(10 * time.Second)      // keys fetched less than UnknownKeyRefresh ago are fresh enough
	claims.Now = clk.Now()
	_, err := v.Verify(ctx, iss.Mint(next.ID, claims))
	require.Equal(t, access.ReasonUnknownKey, reasonOf(t, err))
	require.Equal(t, int64(2), iss.JWKSFetches(), "an unknown kid refreshes once")
	for range 10 {
		_, err = v.Verify(ctx, iss.Mint(next.ID, claims))
		require.Equal(t, access.ReasonUnknownKey, reasonOf(t, err))
	}
	require.Equal(t, int64(2), iss.JWKSFetches(), "made-up kids do not hammer the issuer")

	iss.Publish(next) // the rotation
	clk.Add(10 * time.Second)
	claims.Now = clk.Now()
	p, err := v.Verify(ctx, iss.Mint(next.ID, claims))
	require.NoError(t, err, "the next refresh finds the new key")
	require.Equal(t, "bob", p.Subject)
	require.Equal(t, int64(3), iss.JWKSFetches())

	old := iss.Mint("rsa-1", claims)
	_, err = v.Verify(ctx, old)
	require.NoError(t, err)
	iss.Withdraw("rsa-1")
	clk.Add(10 * time.Second)
	claims.Now = clk.Now()
	_, err = v.Verify(ctx, iss.Mint(iss.NewKey(jose.ES256).ID, claims)) // unknown: refreshes
	require.Error(t, err)
	_, err = v.Verify(ctx, old)
	require.Equal(t, access.ReasonUnknownKey, reasonOf(t, err), "a withdrawn key's tokens stop working, remembered ones too")
}

// The issuer down: tokens signed with keys already known keep working; a token needing a new
// key is refused with keys_unavailable (retryable), and works once the issuer is back.
func TestJWTIssuerDown(t *testing.T) {
	t.Parallel()
	iss := testissuer.New(t)
	clk := newClock()
	var mu sync.Mutex
	var fetchErrors int
	v := newVerifier(t, iss, clk, func(c *access.JWTConfig) {
		c.Keys.OnFetch = func(_ int, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				fetchErrors++
			}
		}
	})
	ctx := context.Background()
	claims := testissuer.Claims{Now: clk.Now()}
	_, err := v.Verify(ctx, iss.Mint("ec-1", claims))
	require.NoError(t, err)

	iss.SetDown(true)
	clk.Add(time.Minute)
	claims.Now = clk.Now()
	_, err = v.Verify(ctx, iss.Mint("ed-1", testissuer.Claims{Subject: "carol", Now: clk.Now()}))
	require.NoError(t, err, "a known key needs no fetch")
	rotated := iss.NewKey(jose.EdDSA)
	iss.Publish(rotated)
	_, err = v.Verify(ctx, iss.Mint(rotated.ID, claims))
	require.Equal(t, access.ReasonKeysUnavailable, reasonOf(t, err))
	var e *access.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, true, e.Extensions()["retryable"])
	require.NotContains(t, e.Message, iss.URL(), "the client is not told where the keys live")
	mu.Lock()
	require.Equal(t, 1, fetchErrors, "the failed fetch is reported")
	mu.Unlock()

	iss.SetDown(false)
	clk.Add(time.Minute)
	claims.Now = clk.Now()
	_, err = v.Verify(ctx, iss.Mint(rotated.ID, claims))
	require.NoError(t, err)
}

// An issuer that is down at start delays JWTs only: the first token that needs keys fetches them.
func TestJWTIssuerDownAtStart(t *testing.T) {
	t.Parallel()
	iss := testissuer.New(t)
	iss.SetDown(true)
	clk := newClock()
	v := newVerifier(t, iss, clk, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	v.Keys().Start(ctx)
	_, err := v.Verify(ctx, iss.Mint("rsa-1", testissuer.Claims{Now: clk.Now()}))
	require.Equal(t, access.ReasonKeysUnavailable, reasonOf(t, err))
	iss.SetDown(false)
	clk.Add(time.Minute)
	_, err = v.Verify(ctx, iss.Mint("rsa-1", testissuer.Claims{Now: clk.Now()}))
	require.NoError(t, err)
}

// The claim mapping: a fixed workspace per issuer, a scope prefix, array claims, a JWKS URL
// without discovery.
func TestJWTClaimMapping(t *testing.T) {
	t.Parallel()
	iss := testissuer.New(t)
	clk := newClock()
	ctx := context.Background()

	t.Run("OK: fixed workspace, JWKS URL, prefixed array scopes", func(t *testing.T) {
		v := newVerifier(t, iss, clk, func(c *access.JWTConfig) {
			c.Issuer, c.JWKSURL = "", iss.JWKSURL()
			c.Workspace, c.ScopesClaim, c.ScopePrefix = "team", "permissions", "forkgraph:"
		})
		p, err := v.Verify(ctx, iss.Mint("rsa-1", testissuer.Claims{Now: clk.Now(), Workspaces: testissuer.NoWorkspaces,
			Extra: map[string]any{"permissions": []string{"forkgraph:ingest", "read", "forkgraph:admin"}, "name": "Dana"}}))
		require.NoError(t, err)
		require.Equal(t, []string{"team"}, p.Workspaces)
		require.Equal(t, access.ScopesOf(access.ScopeIngest, access.ScopeAdmin), p.Scopes, "unprefixed read is not ours")
		require.Equal(t, "Dana", p.Name)
		require.Zero(t, iss.DiscoveryFetches())
	})

	t.Run("OK: a workspaces claim that is one string", func(t *testing.T) {
		v := newVerifier(t, iss, clk, func(c *access.JWTConfig) { c.WorkspacesClaim = "ws" })
		p, err := v.Verify(ctx, iss.Mint("rsa-1", testissuer.Claims{Now: clk.Now(), Workspaces: testissuer.NoWorkspaces,
			Extra: map[string]any{"ws": "solo"}}))
		require.NoError(t, err)
		require.Equal(t, []string{"solo"}, p.Workspaces)
		require.Zero(t, p.Scopes, "no scope claim: no scope")
	})
}

// Configuration mistakes are refused when the server starts.
func TestJWTConfigRefusals(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]access.JWTConfig{
		"no issuer nor JWKS":    {Audience: "a"},
		"no audience":           {Issuer: "https://id.example"},
		"HS256":                 {Issuer: "https://id.example", Audience: "a", Algorithms: []string{"HS256"}},
		"none":                  {Issuer: "https://id.example", Audience: "a", Algorithms: []string{"none"}},
		"plain http to the net": {Issuer: "http://id.example", Audience: "a"},
		"bad fixed workspace":   {Issuer: "https://id.example", Audience: "a", Workspace: " x"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := access.NewJWTVerifier(cfg)
			require.Error(t, err)
		})
	}
}

// An issuer whose discovery document names another issuer is not trusted.
func TestJWTDiscoveryIssuerMismatch(t *testing.T) {
	t.Parallel()
	iss := testissuer.New(t)
	clk := newClock()
	v, err := access.NewJWTVerifier(access.JWTConfig{Issuer: iss.URL() + "/realms/other", Audience: testissuer.Audience, Now: clk.Now})
	require.NoError(t, err)
	_, err = v.Verify(context.Background(), iss.Mint("rsa-1", testissuer.Claims{Now: clk.Now(), Issuer: iss.URL() + "/realms/other"}))
	require.Equal(t, access.ReasonKeysUnavailable, reasonOf(t, err))
}
