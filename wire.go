package main

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/forkgraph/forkgraph/resolvers"
	"github.com/forkgraph/forkgraph/transports"
)

// graphqlTransports returns the transports /graphql serves: the websocket first (it claims
// upgrade requests; its connection_init payload carries the token), then server-sent events,
// then GraphQL over HTTP (GET and POST), which answers an oversized body with 413.
func graphqlTransports(cfg config) []graphql.Transport {
	return []graphql.Transport{
		transports.Websocket{InitFunc: websocketInit(cfg.tokens)},
		transports.SSE{MaxBodyBytes: cfg.maxBody},
		transports.HTTP{MaxBodyBytes: cfg.maxBody},
	}
}

// websocketInit authenticates connection_init with the workspace tokens.
func websocketInit(tokens resolvers.Tokens) transports.InitFunc {
	return func(ctx context.Context, payload map[string]any) (context.Context, *map[string]any, error) {
		ctx, err := tokens.WebsocketInit(ctx, payload)
		return ctx, nil, err
	}
}
