package resolvers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/internal/testissuer"
	"github.com/forkgraph/forkgraph/persisted"
	"github.com/forkgraph/forkgraph/resolvers"
)

// matrixField is one root field as the matrix calls it: its document, the scope issue 22 gives
// it ("" for viewer, which needs any valid credential), and what a call needs prepared (run
// before the database is read, so a refused call is proven to change nothing that an allowed
// one would have changed).
type matrixField struct {
	name    string
	kind    opKind
	scope   access.Scope
	query   string
	prepare func(f *matrixFixture, ws string, n int) map[string]any
}

// matrixFixture is what every cell of one API's matrix reads or changes.
type matrixFixture struct {
	a         *testAPI
	committed map[string]string // workspace → a committed fork operation's id
	cursor    map[string]string // workspace → a cursor with events after it
}

func staticVars(vars func(ws string) map[string]any) func(*matrixFixture, string, int) map[string]any {
	return func(_ *matrixFixture, ws string, _ int) map[string]any { return vars(ws) }
}

var matrixFields = []matrixField{
	{"viewer", kindQuery, "", `query { viewer { subject scopes } }`, staticVars(func(string) map[string]any { return nil })},
	{"node", kindQuery, access.ScopeRead, `query($id: ID!) { node(id: $id) { id } }`,
		staticVars(func(ws string) map[string]any { return map[string]any{"id": sessionGID(ws, "s")} })},
	{"nodes", kindQuery, access.ScopeRead, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`,
		staticVars(func(ws string) map[string]any {
			return map[string]any{"ids": []string{sessionGID(ws, "s"), turnGID(ws, "s-t1")}}
		})},
	{"session", kindQuery, access.ScopeRead, `query($ws: ID!) { session(workspaceId: $ws, id: "s") { id } }`, wsOnly},
	{"sessions", kindQuery, access.ScopeRead, `query($ws: ID!) { sessions(workspaceId: $ws, first: 1) { totalCount } }`, wsOnly},
	{"forkOperation", kindQuery, access.ScopeRead, `query($ws: ID!, $id: ID!) { forkOperation(workspaceId: $ws, id: $id) { id requestedBy } }`,
		func(f *matrixFixture, ws string, _ int) map[string]any {
			return map[string]any{"ws": ws, "id": f.committed[ws]}
		}},
	{"forkOperations", kindQuery, access.ScopeRead, `query($ws: ID!) { forkOperations(workspaceId: $ws, first: 1) { totalCount } }`, wsOnly},
	{"workspaceEventCursor", kindQuery, access.ScopeRead, `query($ws: ID!) { workspaceEventCursor(workspaceId: $ws) }`, wsOnly},
	{"verifyForkedSession", kindQuery, access.ScopeRead,
		`query($ws: ID!) { verifyForkedSession(workspaceId: $ws, sessionId: "s") { status resumable } }`, wsOnly},
	{"workspaceSettings", kindQuery, access.ScopeRead, `query($ws: ID!) { workspaceSettings(workspaceId: $ws) { forkingEnabled } }`, wsOnly},
	{"setWorkspaceForking", kindMutation, access.ScopeAdmin,
		// enabled: true, so the cells after it still fork; the refusals change nothing either way.
		`mutation($ws: ID!) { setWorkspaceForking(workspaceId: $ws, enabled: true) { forkingEnabled } }`, wsOnly},
	{"reportSession", kindMutation, access.ScopeIngest,
		`mutation($ws: ID!, $id: ID!) { reportSession(input: {workspaceId: $ws, id: $id, provider: "simulated"}) { id } }`,
		func(_ *matrixFixture, ws string, n int) map[string]any {
			return map[string]any{"ws": ws, "id": fmt.Sprintf("rs-%d", n)}
		}},
	{"reportTurn", kindMutation, access.ScopeIngest,
		`mutation($ws: ID!, $id: ID!) { reportTurn(input: {workspaceId: $ws, sessionId: "ingest", id: $id, phase: SETTLED, outcome: COMPLETED}) { id } }`,
		func(_ *matrixFixture, ws string, n int) map[string]any {
			return map[string]any{"ws": ws, "id": fmt.Sprintf("rt-%d", n)}
		}},
	{"appendMessages", kindMutation, access.ScopeIngest,
		`mutation($ws: ID!, $id: ID!) { appendMessages(input: {workspaceId: $ws, sessionId: "ingest", turnId: "ingest-t1",
			messages: [{id: $id, role: USER, content: "hello"}]}) { id } }`,
		func(_ *matrixFixture, ws string, n int) map[string]any {
			return map[string]any{"ws": ws, "id": fmt.Sprintf("am-%d", n)}
		}},
	{"reportInteraction", kindMutation, access.ScopeIngest,
		`mutation($ws: ID!, $id: ID!) { reportInteraction(input: {workspaceId: $ws, sessionId: "ingest", turnId: "ingest-t1",
			requestId: $id, kind: QUESTION, prompt: {q: "which?"}, state: PENDING}) { id } }`,
		func(_ *matrixFixture, ws string, n int) map[string]any {
			return map[string]any{"ws": ws, "id": fmt.Sprintf("ri-%d", n)}
		}},
	{"reportAuditMessage", kindMutation, access.ScopeIngest,
		`mutation($ws: ID!, $id: ID!) { reportAuditMessage(input: {workspaceId: $ws, sessionId: "ingest", id: $id,
			kind: "model_changed", content: "model b"}) { id } }`,
		func(_ *matrixFixture, ws string, n int) map[string]any {
			return map[string]any{"ws": ws, "id": fmt.Sprintf("ra-%d", n)}
		}},
	{"deleteSession", kindMutation, access.ScopeAdmin, `mutation($ws: ID!, $id: ID!) { deleteSession(workspaceId: $ws, id: $id, purge: true) }`,
		func(f *matrixFixture, ws string, n int) map[string]any {
			id := fmt.Sprintf("del-%d", n)
			f.a.seedSession(ws, id, 1, "")
			return map[string]any{"ws": ws, "id": id}
		}},
	{"forkSession", kindMutation, access.ScopeFork,
		`mutation($ws: ID!, $s: ID!, $t: ID!, $r: ID!) { forkSession(input: {workspaceId: $ws, sourceSessionId: $s, throughTurnId: $t, requestId: $r}) { id requestedBy } }`,
		func(f *matrixFixture, ws string, n int) map[string]any {
			id := fmt.Sprintf("fk-%d", n)
			f.a.seedSession(ws, id, 1, "")
			return map[string]any{"ws": ws, "s": id, "t": id + "-t1", "r": fmt.Sprintf("req-%d", n)}
		}},
	{"acknowledgeForkOperation", kindMutation, access.ScopeFork,
		`mutation($ws: ID!, $id: ID!) { acknowledgeForkOperation(workspaceId: $ws, id: $id) { id acknowledgedBy } }`,
		func(f *matrixFixture, ws string, n int) map[string]any {
			id := fmt.Sprintf("ack-%d", n)
			f.a.seedSession(ws, id, 1, "")
			return map[string]any{"ws": ws, "id": f.a.forkAndCommit(ws, id, id+"-t1", "r-"+id)}
		}},
	{"reconcileForkOperation", kindMutation, access.ScopeFork,
		`mutation($ws: ID!, $id: ID!) { reconcileForkOperation(workspaceId: $ws, id: $id) { id reconcileAttempts } }`,
		func(f *matrixFixture, ws string, n int) map[string]any {
			return map[string]any{"ws": ws, "id": f.unknownOperation(ws, fmt.Sprintf("rec-%d", n))}
		}},
	{"abandonForkOperation", kindMutation, access.ScopeFork,
		`mutation($ws: ID!, $id: ID!) { abandonForkOperation(workspaceId: $ws, id: $id, reason: "gave up") { id status } }`,
		func(f *matrixFixture, ws string, n int) map[string]any {
			return map[string]any{"ws": ws, "id": f.unknownOperation(ws, fmt.Sprintf("ab-%d", n))}
		}},
	{"forkOperationUpdated", kindSubscription, access.ScopeRead,
		`subscription($ws: ID!, $id: ID!) { forkOperationUpdated(workspaceId: $ws, id: $id) { id status } }`,
		func(f *matrixFixture, ws string, _ int) map[string]any {
			return map[string]any{"ws": ws, "id": f.committed[ws]}
		}},
	{"workspaceEvents", kindSubscription, access.ScopeRead,
		`subscription($ws: ID!, $after: String) { workspaceEvents(workspaceId: $ws, after: $after) { cursor kind } }`,
		func(f *matrixFixture, ws string, _ int) map[string]any {
			return map[string]any{"ws": ws, "after": f.cursor[ws]}
		}},
}

func wsOnly(_ *matrixFixture, ws string, _ int) map[string]any { return map[string]any{"ws": ws} }

// unknownOperation makes a fork of a fresh session whose delivery is unknown.
func (f *matrixFixture) unknownOperation(ws, session string) string {
	f.a.t.Helper()
	f.a.seedSession(ws, session, 1, `{"simulated":{"fork":"unknown","reconcile":"unknown"}}`)
	ctx := context.Background()
	op, err := f.a.engine.StartFork(ctx, forkengine.ForkInput{WorkspaceID: ws, SourceSessionID: session,
		ThroughTurnID: session + "-t1", RequestID: "r-" + session})
	require.NoError(f.a.t, err)
	op, err = f.a.engine.ProcessOperation(ctx, ws, op.ID)
	require.NoError(f.a.t, err)
	require.Equal(f.a.t, forkengine.StatusUnknown, op.Status)
	return op.ID
}

// newMatrixFixture seeds, in each workspace, a session s with two settled turns, a session
// ingest for reports, and a committed fork.
func newMatrixFixture(a *testAPI, workspaces ...string) *matrixFixture {
	f := &matrixFixture{a: a, committed: map[string]string{}, cursor: map[string]string{}}
	for _, ws := range workspaces {
		a.seedSession(ws, "s", 2, "")
		f.cursor[ws] = a.logCursors(ws, 0)[0]
		a.seedSession(ws, "ingest", 1, "")
		f.committed[ws] = a.forkAndCommit(ws, "s", "s-t2", "committed")
	}
	return f
}

// scopeSets are the credentials the matrix presents: none of the scopes, each alone, all four.
var scopeSets = []struct {
	name  string
	scope string // the JWT's OAuth2 scope claim
}{
	{"no scope", "openid profile"},
	{"read", "openid read"},
	{"fork", "fork"},
	{"ingest", "ingest"},
	{"admin", "admin"},
	{"all four", "read fork ingest admin"},
}

// newMatrixAPI is an API on backend accepting JWTs of iss, with APQ on, or (trusted) serving
// only the matrix's documents.
func newMatrixAPI(t *testing.T, iss *testissuer.Issuer, postgres, trusted bool) *testAPI {
	t.Helper()
	verifier, err := access.NewJWTVerifier(access.JWTConfig{Issuer: iss.URL(), Audience: testissuer.Audience})
	require.NoError(t, err)
	docs := persisted.Options{APQEntries: 1000}
	if trusted {
		manifest := map[string]string{}
		for _, f := range matrixFields {
			manifest[documentID(f.query)] = f.query
		}
		raw, err := json.Marshal(manifest)
		require.NoError(t, err)
		docs.Trusted, err = persisted.ParseManifest(raw)
		require.NoError(t, err)
	}
	return newTestAPI(t, apiOptions{engine: noBackground, postgres: postgres,
		auth:   access.NewAuthenticator(access.AuthConfig{JWT: verifier}),
		limits: func(c *resolvers.Config) { c.Persisted = persisted.New(docs) }})
}

// Issue 22's matrix: every root field × each scope set × every transport, on SQLite and on
// PostgreSQL, with JWTs of a real issuer: allowed, or FORBIDDEN missing_scope naming the scope
// with the database unchanged. Then a valid JWT of another workspace, with every scope, is
// refused on every field and path, node and nodes included.
func TestScopeMatrix(t *testing.T) {
	t.Parallel()
	for _, backend := range []struct {
		name     string
		postgres bool
	}{{"SQLite", false}, {"PostgreSQL", true}} {
		t.Run(backend.name, func(t *testing.T) {
			if backend.postgres {
				requirePostgres(t)
			}
			iss := testissuer.New(t)
			for _, trusted := range []bool{false, true} {
				a := newMatrixAPI(t, iss, backend.postgres, trusted)
				f := newMatrixFixture(a, "wa", "wb")
				runScopeMatrix(t, iss, a, f, trusted)
			}
		})
	}
}

func runScopeMatrix(t *testing.T, iss *testissuer.Issuer, a *testAPI, f *matrixFixture, trusted bool) {
	n := 0
	// clean is the digest of the tables when nothing has been written since it was taken (the
	// one after the last refused call), "" when unknown: a run of refused calls reads the tables
	// once per call, not twice, and each call is still held to the digest of the moment before
	// it. Anything that may write (an allowed call, a preparation, a new caller) forgets it, and
	// so does a call that failed its checks.
	clean := ""
	refusedChangesNothing := func(t *testing.T, call func(), msgAndArgs ...any) {
		t.Helper()
		before := clean
		if before == "" {
			before = a.with(t).tableDigest()
		}
		clean = ""
		call()
		after := a.with(t).tableDigest()
		require.Equal(t, before, after, msgAndArgs...)
		clean = after
	}
	// A refused call leaves what it was prepared for as it was, so the next refused call of the
	// same field can use it: the database grows with the allowed calls only.
	spare := map[string]map[string]any{}
	refusable := func(field matrixField) map[string]any {
		if spare[field.name] == nil {
			clean = ""
			spare[field.name] = field.prepare(f, "wa", n)
		}
		return spare[field.name]
	}
	for _, tr := range matrixTransports {
		if (tr.name == "trusted document") != trusted {
			continue
		}
		t.Run(tr.name, func(t *testing.T) {
			for _, set := range scopeSets {
				token := iss.Mint("rsa-1", testissuer.Claims{Subject: "user-" + strings.ReplaceAll(set.name, " ", "-"),
					Workspaces: []string{"wa"}, Scope: set.scope})
				clean = ""
				caller := tr.open(t, a, "Bearer "+token)
				granted := grantedScopes(set.scope)
				for _, field := range matrixFields {
					if !tr.carries(field.kind) {
						continue
					}
					n++
					t.Run(set.name+"/"+field.name, func(t *testing.T) {
						if field.scope == "" || granted.Has(field.scope) {
							clean = ""
							errs := caller.run(t, fmt.Sprintf("op-%d", n), field.query, field.prepare(f, "wa", n), field.kind)
							for _, e := range errs {
								require.NotContains(t, []string{"FORBIDDEN", "UNAUTHENTICATED"}, e.code(), "allowed: %+v", errs)
							}
							return
						}
						vars := refusable(field)
						refusedChangesNothing(t, func() {
							errs := caller.run(t, fmt.Sprintf("op-%d", n), field.query, vars, field.kind)
							require.Len(t, errs, 1, "%v", codes(errs))
							require.Equal(t, "FORBIDDEN", errs[0].code(), "%+v", errs[0])
							require.Equal(t, access.ReasonMissingScope, errs[0].Extensions["reason"])
							require.Equal(t, strings.ToUpper(string(field.scope)), errs[0].Extensions["scope"])
						}, "a refused %s changes nothing", field.name)
					})
				}
			}
			// A valid JWT of another workspace, with every scope, reaches nothing of wa.
			other := iss.Mint("ec-1", testissuer.Claims{Subject: "intruder", Workspaces: []string{"wb"}, Scope: "read fork ingest admin"})
			clean = ""
			caller := tr.open(t, a, "Bearer "+other)
			for _, field := range matrixFields {
				if !tr.carries(field.kind) || field.scope == "" {
					continue
				}
				n++
				t.Run("another workspace/"+field.name, func(t *testing.T) {
					vars := refusable(field)
					refusedChangesNothing(t, func() {
						errs := caller.run(t, fmt.Sprintf("op-%d", n), field.query, vars, field.kind)
						require.Len(t, errs, 1, "%v", codes(errs))
						require.Equal(t, "FORBIDDEN", errs[0].code(), "%+v", errs[0])
						require.Equal(t, access.ReasonWorkspaceForbidden, errs[0].Extensions["reason"])
					}, "a refused %s of another workspace changes nothing", field.name)
				})
			}
		})
	}
}

// grantedScopes are the scopes a scope claim grants: its words that name one.
func grantedScopes(claim string) access.Scopes {
	var set access.Scopes
	for _, word := range strings.Fields(claim) {
		if scope, ok := access.ParseScope(word); ok {
			set |= access.ScopesOf(scope)
		}
	}
	return set
}
