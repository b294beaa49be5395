package access_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/internal/testissuer"
)

func TestPrincipalAuthorize(t *testing.T) {
	t.Parallel()
	path := writeTokenFile(t, "front "+tokFront+" demo,lisbon read,fork\n")
	tf, err := access.LoadTokenFile(path, nil, nil)
	require.NoError(t, err)
	front, err := access.NewAuthenticator(access.AuthConfig{TokenFile: tf}).Authenticate(context.Background(), "Bearer "+tokFront)
	require.NoError(t, err)
	now := time.Now()
	for _, tc := range []struct {
		name, workspace string
		scope           access.Scope
		code, reason    string
		scopeExt        string
	}{
		{"OK: read own workspace", "demo", access.ScopeRead, "", "", ""},
		{"OK: fork the other workspace", "lisbon", access.ScopeFork, "", "", ""},
		{"OK: no workspace, no scope (viewer)", "", "", "", "", ""},
		{"FORBIDDEN: ingest", "demo", access.ScopeIngest, "FORBIDDEN", access.ReasonMissingScope, "INGEST"},
		{"FORBIDDEN: admin", "demo", access.ScopeAdmin, "FORBIDDEN", access.ReasonMissingScope, "ADMIN"},
		{"FORBIDDEN: another workspace", "paris", access.ScopeRead, "FORBIDDEN", access.ReasonWorkspaceForbidden, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := front.Authorize(now, tc.workspace, tc.scope)
			if tc.code == "" {
				require.NoError(t, err)
				return
			}
			var e *access.Error
			require.True(t, errors.As(err, &e))
			ext := e.Extensions()
			require.Equal(t, tc.code, ext["code"])
			require.Equal(t, tc.reason, ext["reason"])
			if tc.scopeExt != "" {
				require.Equal(t, tc.scopeExt, ext["scope"])
				require.Contains(t, e.Message, string(tc.scope))
			}
		})
	}
	require.NoError(t, access.OpenPrincipal().Authorize(now, "anything", access.ScopeAdmin), "open mode allows everything")
}

func TestIdentify(t *testing.T) {
	t.Parallel()
	open := access.NewAuthenticator(access.AuthConfig{})
	require.True(t, open.Open())
	p, err := open.Identify(context.Background())
	require.NoError(t, err)
	require.True(t, p.Open())

	set, err := access.ParseTokens(tokFront + "=demo")
	require.NoError(t, err)
	a := access.NewAuthenticator(access.AuthConfig{Tokens: set})
	_, err = a.Identify(context.Background())
	require.Equal(t, access.ReasonCredentialMissing, reasonOf(t, err))
	ctx, err := a.WebsocketInit(context.Background(), map[string]any{"authorization": "Bearer " + tokFront})
	require.NoError(t, err)
	p, err = a.Identify(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"demo"}, p.Workspaces)
	require.Equal(t, p.Subject, access.SubjectOf(ctx))
	life, release := access.StreamLifetime(ctx)
	require.Nil(t, life, "a -tokens token never ends")
	require.Nil(t, release)
	_, err = a.WebsocketInit(context.Background(), map[string]any{"authorization": "Bearer nope-nope-nope-nope"})
	require.Equal(t, access.ReasonUnknownToken, reasonOf(t, err))
	_, err = a.WebsocketInit(context.Background(), nil)
	require.Equal(t, access.ReasonCredentialMissing, reasonOf(t, err))
}

// A JWT principal's lifetime ends at exp plus the clock skew, with TOKEN_EXPIRED.
func TestJWTLifetime(t *testing.T) {
	t.Parallel()
	iss := testissuer.New(t)
	v, err := access.NewJWTVerifier(access.JWTConfig{Issuer: iss.URL(), Audience: testissuer.Audience, ClockSkew: -1})
	require.NoError(t, err)
	a := access.NewAuthenticator(access.AuthConfig{JWT: v})
	// exp is a whole second: 1.5 s from now puts it 0.5 to 1.5 s ahead, time enough for the
	// in-process calls below and a shorter wait than 2 s (1 to 2 s ahead).
	token := iss.Mint("ed-1", testissuer.Claims{ExpiresIn: 1500 * time.Millisecond})
	ctx, err := a.WebsocketInit(context.Background(), map[string]any{"authorization": "Bearer " + token})
	require.NoError(t, err)
	p, err := a.Identify(ctx)
	require.NoError(t, err)
	life, release := access.StreamLifetime(ctx)
	require.NotNil(t, life)
	defer release()
	select {
	case <-life.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the lifetime did not end")
	}
	require.Equal(t, "TOKEN_EXPIRED", codeOf(context.Cause(life)))
	require.False(t, time.Now().Before(p.ExpiresAt), "not before exp")
	require.Equal(t, access.ReasonTokenExpired, reasonOf(t, p.Authorize(time.Now(), "demo", access.ScopeRead)))
}
