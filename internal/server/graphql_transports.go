package server

import (
	"context"
	"log/slog"

	"github.com/99designs/gqlgen/graphql"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/resolvers"
	"github.com/forkgraph/forkgraph/transports"
)

// graphqlTransports returns the transports /graphql serves: the websocket first (it claims
// upgrade requests; its connection_init payload carries the credential, each operation it starts
// is charged to that subject's rate limit, which routes puts in the request context, and it
// closes with 4403 TOKEN_EXPIRED or TOKEN_REVOKED when its credential ends, as SSE streams end), then
// server-sent events in both of graphql-sse's modes (single-connection reservations live in this
// process, so behind a load balancer they need sticky routing; each client's are bounded, the
// client named as the rate limit names it: its valid token, else its address), then GraphQL over HTTP (GET and POST), which answers an oversized body
// with 413. Each leaves the deferred fields out of a @defer query's first payload (Deferral).
func graphqlTransports(cfg config, logger *slog.Logger) []graphql.Transport {
	deferral := transports.Deferral{Schema: resolvers.Schema(), Later: resolvers.ResolvedLater}
	return []graphql.Transport{
		transports.Websocket{InitFunc: websocketInit(cfg.authn), OperationLimiter: access.LimitWebsocketOperation,
			CheckOrigin: cfg.edge.origins.Allows, Deferral: deferral, Lifetime: access.StreamLifetime,
			Logger: logger, RequestID: access.RequestID},
		transports.SSE{MaxBodyBytes: cfg.maxBody, Single: &transports.Reservations{ClientKey: cfg.edge.proxies.ClientKey},
			Deferral: deferral, Lifetime: access.StreamLifetime, Logger: logger, RequestID: access.RequestID},
		transports.HTTP{MaxBodyBytes: cfg.maxBody, Deferral: deferral, Logger: logger, RequestID: access.RequestID},
	}
}

// websocketInit authenticates connection_init and binds the connection's operations to the
// rate-limit bucket of the subject it presented.
func websocketInit(auth *access.Authenticator) transports.InitFunc {
	return func(ctx context.Context, payload map[string]any) (context.Context, *map[string]any, error) {
		ctx, err := auth.WebsocketInit(ctx, payload)
		if err != nil {
			return ctx, nil, err
		}
		return access.BindWebsocketRateLimit(ctx), nil, nil
	}
}
