package resolvers_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/internal/dbtemplate"
	"github.com/forkgraph/forkgraph/providers/simulated"
	"github.com/forkgraph/forkgraph/resolvers"
	"github.com/forkgraph/forkgraph/store"
)

// testAPI is the GraphQL server over a real engine, a real SQLite file in t.TempDir() and the
// simulated driver, reachable in process (gqlgen's client) and over a real websocket.
type testAPI struct {
	t      *testing.T
	db     *store.DB
	dbCfg  store.Config // how db was opened (tableDigest reads it past the store)
	raw    *rawConn     // tableDigest's own connection, shared by the copies with() makes
	root   *testing.T   // the test that made the API, which outlives its subtests
	engine *forkengine.Engine
	broker *forkengine.Broker
	feed   *forkengine.Feed
	feedDB *store.DB // the feed's own handle: reads here are not counted as the API's
	sim    *simulated.Driver
	srv    *handler.Server
	http   http.Handler
	client *client.Client
	url    string // base URL of the httptest server (websocket clients)
}

// Static tokens of the tests (at least access.MinTokenLength bytes).
const (
	tokA = "token-a-0123456789"
	tokB = "token-b-0123456789"
)

// tokenAuth authenticates the -tokens spec (token=workspace, ...): every scope.
func tokenAuth(t *testing.T, spec string) *access.Authenticator {
	t.Helper()
	set, err := access.ParseTokens(spec)
	require.NoError(t, err)
	return access.NewAuthenticator(access.AuthConfig{Tokens: set})
}

// quiet drops the store's migration notes from test output.
var quiet = slog.New(slog.DiscardHandler)

type apiOptions struct {
	engine      func(*forkengine.Config)
	auth        *access.Authenticator // nil: open mode
	latency     time.Duration
	brokerQueue int
	limits      func(*resolvers.Config)
	// postgres runs the API on a schema of its own in FORKGRAPH_TEST_POSTGRES_DSN's database
	// instead of a SQLite file.
	postgres bool
}

func newTestAPI(t *testing.T, opts apiOptions) *testAPI {
	t.Helper()
	ctx := context.Background()
	var dbCfg, feedCfg store.Config
	if opts.postgres {
		dbCfg = postgresTestConfig(t)
		feedCfg = dbCfg
	} else {
		// A copy of a file this process migrated once (internal/dbtemplate): each API starts on
		// a fresh database at the latest schema without running every migration again.
		dbPath := dbtemplate.Copy(t, "resolvers", t.TempDir(), "forkgraph.db", func(path string) error {
			db, err := store.Open(ctx, store.Config{Driver: "sqlite", DSN: path, Logger: quiet})
			if err != nil {
				return err
			}
			return db.Close()
		})
		dbCfg = store.Config{Driver: "sqlite", DSN: dbPath, Logger: quiet}
		feedCfg = store.Config{Driver: "sqlite", DSN: dbPath, ReadOnly: true, Logger: quiet}
	}
	db, err := store.Open(ctx, dbCfg)
	require.NoError(t, err)
	sim := simulated.New(simulated.Options{Latency: opts.latency})
	// As in the server: subscribers get events only from the engine's feed, which follows the
	// log. It reads through a handle of its own, so the SQL statements the batching tests count
	// on db are the API's alone.
	feedDB, err := store.Open(ctx, feedCfg)
	require.NoError(t, err)
	ecfg := forkengine.Config{Store: db, Drivers: map[string]forkengine.Driver{"simulated": sim}, Logger: quiet,
		Events: forkengine.EventsConfig{Log: feedDB, QueueSize: opts.brokerQueue}}
	if opts.engine != nil {
		opts.engine(&ecfg)
	}
	engine, err := forkengine.New(ecfg)
	require.NoError(t, err)
	feedCtx, stopFeed := context.WithCancel(ctx)
	require.NoError(t, engine.StartEvents(feedCtx))
	broker, feed := engine.Broker(), engine.Feed()
	rcfg := resolvers.Config{Engine: engine, Identify: opts.auth.Identify, Logger: quiet,
		RequestID: access.RequestID}
	if opts.limits != nil {
		opts.limits(&rcfg)
	}
	srv := resolvers.NewServer(rcfg)
	for _, tr := range testTransports(opts.auth) {
		srv.AddTransport(tr)
	}
	h := opts.auth.HTTPMiddleware(srv)
	ts := httptest.NewServer(h)
	api := &testAPI{t: t, db: db, dbCfg: dbCfg, raw: new(rawConn), root: t, engine: engine, broker: broker, feed: feed, feedDB: feedDB, sim: sim, srv: srv, http: h,
		client: client.New(h), url: ts.URL}
	t.Cleanup(func() {
		ts.Close()
		closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, engine.Close(closeCtx))
		stopFeed()
		require.NoError(t, feedDB.Close())
		require.NoError(t, db.Close())
	})
	return api
}

// with returns a copy of the API whose helpers report to t (a subtest).
func (a *testAPI) with(t *testing.T) *testAPI {
	c := *a
	c.t = t
	return &c
}

// gqlError is one entry of a response's errors.
type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

func (e gqlError) code() string { s, _ := e.Extensions["code"].(string); return s }

// do runs an operation in process and decodes data into out (when not nil). It returns the
// response's errors.
func (a *testAPI) do(query string, out any, vars map[string]any, opts ...client.Option) []gqlError {
	a.t.Helper()
	for k, v := range vars {
		opts = append(opts, client.Var(k, v))
	}
	resp, err := a.client.RawPost(query, opts...)
	if err != nil { // a 4xx answer (parse and validation errors) still carries a GraphQL body
		status, body, ok := strings.Cut(err.Error(), ": ")
		require.True(a.t, ok && strings.HasPrefix(status, "http 4"), "request failed: %v", err)
		resp = &client.Response{}
		require.NoError(a.t, json.Unmarshal([]byte(body), resp))
	}
	var errs []gqlError
	if len(resp.Errors) > 0 {
		require.NoError(a.t, json.Unmarshal(resp.Errors, &errs))
	}
	if out != nil && resp.Data != nil {
		raw, err := json.Marshal(resp.Data)
		require.NoError(a.t, err)
		require.NoError(a.t, json.Unmarshal(raw, out))
	}
	return errs
}

// mustDo runs an operation that must succeed.
func (a *testAPI) mustDo(query string, out any, vars map[string]any, opts ...client.Option) {
	a.t.Helper()
	errs := a.do(query, out, vars, opts...)
	require.Empty(a.t, errs, "query: %s", query)
}

// expectCode runs an operation that must fail with one error of the given code; it returns it.
func (a *testAPI) expectCode(code, query string, vars map[string]any, opts ...client.Option) gqlError {
	a.t.Helper()
	errs := a.do(query, nil, vars, opts...)
	require.Len(a.t, errs, 1, "query: %s", query)
	require.Equal(a.t, code, errs[0].code(), "error: %+v", errs[0])
	return errs[0]
}
