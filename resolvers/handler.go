package resolvers

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/graph"
	"github.com/forkgraph/forkgraph/limits"
)

// Config wires the GraphQL server. Engine is required; its streams serve the subscriptions.
type Config struct {
	Engine *forkengine.Engine
	// Identify says who the caller is (access.Authenticator.Identify); the field policy checks
	// its workspaces and scopes per root field, viewer shows it, forks record its subject. nil:
	// open (development) mode.
	Identify Identify
	// Now is the clock credentials expire by (default time.Now).
	Now func() time.Time
	// RequestID returns the id of the request ctx belongs to, logged and shown beside internal
	// errors (access.RequestID); nil: none.
	RequestID func(ctx context.Context) string
	Logger    *slog.Logger // default slog.Default()
	// ComplexityLimit and DepthLimit bound one operation (defaults limits.DefaultComplexityLimit,
	// limits.DefaultDepthLimit); DepthLimit, when set, overrides Document.Depth.
	ComplexityLimit int
	DepthLimit      int
	// Document bounds a document before it is validated (zero fields: defaults).
	Document limits.Document
	// Persisted, when set, runs first of all: it fills in or refuses the document of a request
	// that names one by hash (Apollo APQ, trusted documents).
	Persisted graphql.HandlerExtension
	// Extensions are installed before every other extension and middleware, so they see each
	// operation and response as the client does, stream-ending errors included (metrics,
	// tracing, operation logs).
	Extensions []graphql.HandlerExtension
	// Batch, when set, is told about every loader batch read (see BatchObserver).
	Batch BatchObserver
	// Unavailable, when set, reports whether an error means the database could not be reached
	// (store.IsUnavailable): such an error is UNAVAILABLE with retryable: true, not
	// INTERNAL_SERVER_ERROR, and its cause is logged with the request id.
	Unavailable func(error) bool
	// SearchScanRows bounds the index rows one search page or count examines (default
	// forkengine.SearchScanRows); tests lower it to cross the bound with a few sessions.
	SearchScanRows int
	// NarrowReads, when set, are the narrower reads of a response that shows only some fields of
	// messages or lineages (see NarrowReads); nil: the Engine's Reader when it offers them (the
	// server's store wrapped for telemetry does not, so the server passes the store), else rows
	// are always read whole.
	NarrowReads NarrowReads
}

// NewServer builds the gqlgen server: schema, resolvers, per-response loaders, workspace
// authorization, limits, the error presenter and panic recovery. The caller adds transports
// (HTTP, websocket, SSE) with AddTransport.
func NewServer(cfg Config) *handler.Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.RequestID == nil {
		cfg.RequestID = func(context.Context) string { return "" }
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	sources := loaderSources{engine: cfg.Engine, batch: cfg.Batch, narrow: cfg.NarrowReads}
	if narrow, ok := cfg.Engine.Reader().(NarrowReads); ok && sources.narrow == nil {
		sources.narrow = narrow
	}
	root := &Resolver{engine: cfg.Engine, logger: cfg.Logger, batch: cfg.Batch,
		sources: sources, shared: &sharedStreams{}, identify: cfg.Identify,
		searchScan: cmp.Or(cfg.SearchScanRows, forkengine.SearchScanRows)}
	root.workspaces = forkengine.NewWorkspaceStreams(cfg.Engine, root.views.of)
	gcfg := graph.Config{Resolvers: root}
	limits.Complexity(&gcfg.Complexity, MaxNodeIDs)
	schema := graph.NewExecutableSchema(gcfg)
	rules, err := readRootRules(schema.Schema())
	if err != nil {
		panic("resolvers: " + err.Error()) // the committed schema is wrong: no server may start with it
	}
	srv := handler.New(schema)

	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	for _, ext := range cfg.Extensions {
		srv.Use(ext)
	}
	srv.Use(extension.Introspection{})
	if cfg.Persisted != nil {
		// Before the limits, which read the document it fills in; it caches a document only when
		// the operation is dispatched, after every check below has accepted it.
		srv.Use(cfg.Persisted)
	}
	doc := cfg.Document
	if cfg.DepthLimit > 0 {
		doc.Depth = cfg.DepthLimit
	}
	srv.Use(limits.DocumentRule(doc))
	srv.Use(limits.ComplexityRule(cfg.ComplexityLimit))
	srv.Use(limits.IntrospectionRule{})

	srv.AroundOperations(withStreamEnd)
	srv.AroundOperations(withSharedSlot)
	// Outermost first: a stream's end is reported around everything; a member of a shared
	// subscription that gets another member's response builds no loaders.
	srv.AroundResponses(endStreamWithError)
	srv.AroundResponses(shareResponses)
	srv.AroundResponses(withLoaders(sources))
	srv.Use(mutationFieldLoaders{})
	srv.Use(fieldPolicy{identify: cfg.Identify, rules: rules, now: cfg.Now, ids: idArguments{schema: schema.Schema()}})
	srv.SetErrorPresenter(presentError(cfg.Logger, cfg.RequestID, cfg.Unavailable))
	srv.SetRecoverFunc(recoverPanic(cfg.Logger, cfg.RequestID))
	return srv
}
