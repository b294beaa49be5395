package main

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/resolvers"
	"github.com/forkgraph/forkgraph/transports"
)

// graphqlTransports returns the transports /graphql serves: the websocket first (it claims
// upgrade requests; its connection_init payload carries the token, and each operation it starts
// is charged to that token's rate limit, which routes puts in the request context), then
// server-sent events in both of graphql-sse's modes (single-connection reservations live in this
// process, so behind a load balancer they need sticky routing; each client's are bounded, the
// client named as the rate limit names it: its valid token, else its address), then GraphQL over HTTP (GET and POST), which answers an oversized body
// with 413. Each leaves the deferred fields out of a @defer query's first payload (Deferral).
func graphqlTransports(cfg config) []graphql.Transport {
	deferral := transports.Deferral{Schema: resolvers.Schema(), Later: resolvers.ResolvedLater}
	return []graphql.Transport{
		transports.Websocket{InitFunc: websocketInit(cfg.tokens), OperationLimiter: access.LimitWebsocketOperation,
			CheckOrigin: cfg.edge.origins.Allows, Deferral: deferral},
		transports.SSE{MaxBodyBytes: cfg.maxBody, Single: &transports.Reservations{ClientKey: cfg.edge.proxies.ClientKey},
			Deferral: deferral},
		transports.HTTP{MaxBodyBytes: cfg.maxBody, Deferral: deferral},
	}
}

// websocketInit authenticates connection_init with the workspace tokens and binds the
// connection's operations to the rate-limit bucket of the token it presented.
func websocketInit(tokens access.Tokens) transports.InitFunc {
	return func(ctx context.Context, payload map[string]any) (context.Context, *map[string]any, error) {
		ctx, err := tokens.WebsocketInit(ctx, payload)
		if err != nil {
			return ctx, nil, err
		}
		return access.BindWebsocketRateLimit(ctx, payload), nil, nil
	}
}
