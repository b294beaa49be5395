// Package resolvers holds forkgraph's GraphQL resolvers: thin functions that map arguments, call
// the forkengine.Engine or a request-scoped loader, and map the result; the loaders; the
// subscription adapters over the engine's streams; workspace authorization; and the one error
// presenter. NewServer assembles them into a gqlgen server (transports are added by the caller).
package resolvers

import (
	"context"
	"log/slog"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
)

// Resolver is the root of every resolver. It holds no request state: per-response state lives in
// the loaders installed by NewServer. (views holds the immutable view of the event being
// published, shared by its subscribers; see eventViews.)
type Resolver struct {
	engine *forkengine.Engine
	// workspaces follows workspace streams of engine, each event presented by views.
	workspaces *forkengine.WorkspaceStreams[*models.WorkspaceEvent]
	logger     *slog.Logger
	batch      BatchObserver
	// sources are what each response's loaders read from (engine and batch among them).
	sources loaderSources
	views   eventViews // API views of live events, shared by their subscribers
	shared  *sharedStreams
	// identify says who the caller is (Config.Identify); nil: open mode.
	identify Identify
	// searchScan bounds a search page's and count's index rows (Config.SearchScanRows).
	searchScan int
}

// subject is the caller's subject, what forks record as requestedBy and acknowledgedBy: "" in
// open mode (the field policy has already refused a caller without a valid credential).
func (r *Resolver) subject(ctx context.Context) string {
	p, err := r.identify.caller(ctx)
	if err != nil {
		return ""
	}
	return p.Subject
}

// loaders returns the response's loader set.
// Outside a response (never, in the server) it returns a fresh, unshared set.
func (r *Resolver) loaders(ctx context.Context) *loaders {
	if slot, ok := ctx.Value(loadersKey{}).(*responseLoaders); ok {
		return slot.get()
	}
	return newLoaders(ctx, r.sources)
}
