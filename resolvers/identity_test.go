package resolvers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/internal/testissuer"
)

// Introspection shows each root field's scope as the last line of its description, and the
// matrix calls every root field there is.
func TestIntrospectionShowsEachRootFieldsScope(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	var got struct {
		Schema map[string]struct {
			Fields []struct{ Name, Description string }
		} `json:"__schema"`
	}
	api.mustDo(`{ __schema { queryType { fields { name description } } mutationType { fields { name description } }
		subscriptionType { fields { name description } } } }`, &got, nil)
	inMatrix := map[string]matrixField{}
	for _, f := range matrixFields {
		inMatrix[f.name] = f
	}
	seen := 0
	for _, root := range got.Schema {
		for _, field := range root.Fields {
			f, ok := inMatrix[field.Name]
			require.True(t, ok, "the scope matrix does not call %s", field.Name)
			lines := strings.Split(strings.TrimSpace(field.Description), "\n")
			want := "Requires any valid credential."
			if f.scope != "" {
				want = "Requires scope " + strings.ToUpper(string(f.scope)) + "."
			}
			require.Equal(t, want, lines[len(lines)-1], field.Name)
			seen++
		}
	}
	require.Equal(t, len(matrixFields), seen)
}

// viewer says who the caller is, for each kind of credential; a refused credential says why.
func TestViewer(t *testing.T) {
	t.Parallel()
	const fields = `{ viewer { subject name workspaces scopes expiresAt credential } }`
	type viewer struct {
		Subject, Name *string
		Workspaces    []string
		Scopes        []string
		ExpiresAt     *time.Time
		Credential    string
	}
	t.Run("open mode", func(t *testing.T) {
		var got struct{ Viewer viewer }
		newTestAPI(t, apiOptions{}).mustDo(fields, &got, nil)
		require.Equal(t, viewer{Scopes: []string{"READ", "FORK", "INGEST", "ADMIN"}, Credential: "OPEN"}, got.Viewer)
	})

	iss := testissuer.New(t)
	verifier, err := access.NewJWTVerifier(access.JWTConfig{Issuer: iss.URL(), Audience: testissuer.Audience})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(path, []byte("frontend "+tokA+" wb,wa read,fork\n"), 0o600))
	file, err := access.LoadTokenFile(path, nil, nil)
	require.NoError(t, err)
	api := newTestAPI(t, apiOptions{auth: access.NewAuthenticator(access.AuthConfig{TokenFile: file, JWT: verifier})})

	t.Run("a static token", func(t *testing.T) {
		var got struct{ Viewer viewer }
		api.with(t).mustDo(fields, &got, nil, bearer(tokA))
		name := "frontend"
		require.Equal(t, viewer{Subject: &name, Name: &name, Workspaces: []string{"wa", "wb"}, Scopes: []string{"READ", "FORK"},
			Credential: "TOKEN"}, got.Viewer)
	})
	t.Run("a JWT", func(t *testing.T) {
		exp := time.Now().Add(time.Hour).Truncate(time.Second)
		token := iss.Mint("ed-1", testissuer.Claims{Subject: "auth0|42", Workspaces: []string{"wa"}, Scope: "openid ingest",
			ExpiresIn: time.Until(exp), Extra: map[string]any{"preferred_username": "ada"}})
		var got struct{ Viewer viewer }
		api.with(t).mustDo(fields, &got, nil, bearer(token))
		require.Equal(t, "auth0|42", *got.Viewer.Subject)
		require.Equal(t, "ada", *got.Viewer.Name)
		require.Equal(t, []string{"INGEST"}, got.Viewer.Scopes)
		require.Equal(t, "JWT", got.Viewer.Credential)
		require.WithinDuration(t, exp, *got.Viewer.ExpiresAt, time.Second)
	})
	for name, tc := range map[string]struct{ token, reason string }{
		"no credential":   {"", access.ReasonCredentialMissing},
		"an unknown one":  {"not-a-token-of-this-server", access.ReasonUnknownToken},
		"an expired JWT":  {iss.Mint("rsa-1", testissuer.Claims{ExpiresIn: -time.Hour}), access.ReasonTokenExpired},
		"another API's":   {iss.Mint("rsa-1", testissuer.Claims{Audience: []string{"other"}}), access.ReasonWrongAudience},
		"a forged (none)": {iss.Unsigned(testissuer.Claims{}), access.ReasonInvalidToken},
	} {
		t.Run("refused: "+name, func(t *testing.T) {
			var errs []gqlError
			if tc.token == "" {
				errs = api.with(t).do(fields, nil, nil)
			} else {
				errs = api.with(t).do(fields, nil, nil, bearer(tc.token))
			}
			require.Len(t, errs, 1)
			require.Equal(t, "UNAUTHENTICATED", errs[0].code())
			require.Equal(t, tc.reason, errs[0].Extensions["reason"])
		})
	}
}

// Who did it: a fork records the subject that asked for it and the one that acknowledged it;
// reads, the operation's subscription and the workspace stream show both.
func TestForkRecordsWhoAskedAndWhoAcknowledged(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(path, []byte("alice "+tokA+" wa read,fork\nbob "+tokB+" wa read,fork\n"), 0o600))
	file, err := access.LoadTokenFile(path, nil, nil)
	require.NoError(t, err)
	api := newTestAPI(t, apiOptions{engine: noBackground, auth: access.NewAuthenticator(access.AuthConfig{TokenFile: file})})
	api.seedSession("wa", "s", 1, "")

	var started struct {
		ForkSession struct{ LocalID, RequestedBy string }
	}
	api.mustDo(`mutation { forkSession(input: {workspaceId: "wa", sourceSessionId: "s", throughTurnId: "s-t1", requestId: "r1"}) {
		localId requestedBy } }`, &started, nil, bearer(tokA))
	require.Equal(t, "alice", started.ForkSession.RequestedBy)
	id := started.ForkSession.LocalID
	_, err = api.engine.ProcessOperation(t.Context(), "wa", id)
	require.NoError(t, err)

	ws := api.dialWS(map[string]any{"authorization": "Bearer " + tokB})
	ws.subscribe("op", `subscription($id: ID!) { forkOperationUpdated(workspaceId: "wa", id: $id) { status requestedBy acknowledgedBy } }`,
		map[string]any{"id": id})
	var first struct {
		ForkOperationUpdated struct {
			Status, RequestedBy string
			AcknowledgedBy      *string
		}
	}
	ws.nextData("op", &first)
	require.Equal(t, "COMMITTED", first.ForkOperationUpdated.Status)
	require.Equal(t, "alice", first.ForkOperationUpdated.RequestedBy)
	require.Nil(t, first.ForkOperationUpdated.AcknowledgedBy)

	var acked struct {
		AcknowledgeForkOperation struct{ AcknowledgedBy string }
	}
	ack := `mutation($id: ID!) { acknowledgeForkOperation(workspaceId: "wa", id: $id) { acknowledgedBy } }`
	api.mustDo(ack, &acked, map[string]any{"id": id}, bearer(tokB))
	require.Equal(t, "bob", acked.AcknowledgeForkOperation.AcknowledgedBy)
	api.mustDo(ack, &acked, map[string]any{"id": id}, bearer(tokA))
	require.Equal(t, "bob", acked.AcknowledgeForkOperation.AcknowledgedBy, "the first acknowledgement stays")

	var read struct {
		ForkOperation struct{ RequestedBy, AcknowledgedBy string }
	}
	api.mustDo(`query($id: ID!) { forkOperation(workspaceId: "wa", id: $id) { requestedBy acknowledgedBy } }`, &read,
		map[string]any{"id": id}, bearer(tokA))
	require.Equal(t, "alice", read.ForkOperation.RequestedBy)
	require.Equal(t, "bob", read.ForkOperation.AcknowledgedBy)
}
