package resolvers

import (
	"context"
	"log/slog"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/graph"
)

// Config wires the GraphQL server. Engine and Broker are required.
type Config struct {
	Engine *forkengine.Engine
	Broker *forkengine.Broker
	Tokens Tokens       // none: open (development) mode
	Logger *slog.Logger // default slog.Default()
	// ComplexityLimit and DepthLimit bound one operation (defaults DefaultComplexityLimit,
	// DefaultDepthLimit).
	ComplexityLimit int
	DepthLimit      int
	// StreamError, when set, ends a subscription with an error through the transport (for
	// transports.AddSubscriptionError); it returns false when the transport cannot, and the
	// error is then sent as a last response.
	StreamError func(ctx context.Context, err *gqlerror.Error) bool
}

// NewServer builds the gqlgen server: schema, resolvers, per-response loaders, workspace
// authorization, limits, the error presenter and panic recovery. The caller adds transports
// (HTTP, websocket, SSE) with AddTransport.
func NewServer(cfg Config) *handler.Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	gcfg := graph.Config{Resolvers: &Resolver{engine: cfg.Engine, broker: cfg.Broker, logger: cfg.Logger}}
	connectionComplexity(&gcfg.Complexity)
	srv := handler.New(graph.NewExecutableSchema(gcfg))

	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.Use(extension.Introspection{})
	srv.Use(extension.FixedComplexityLimit(orDefault(cfg.ComplexityLimit, DefaultComplexityLimit)))
	srv.Use(depthLimit{max: orDefault(cfg.DepthLimit, DefaultDepthLimit)})

	srv.AroundOperations(withStreamEnd)
	srv.AroundResponses(withLoaders(cfg.Engine))
	srv.AroundResponses(endStreamWithError(cfg.StreamError))
	srv.AroundFields(cfg.Tokens.authorizeRootField)
	srv.SetErrorPresenter(presentError(cfg.Logger))
	srv.SetRecoverFunc(recoverPanic(cfg.Logger))
	return srv
}

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}
