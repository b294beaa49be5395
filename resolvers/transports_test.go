package resolvers_test

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/resolvers"
	"github.com/forkgraph/forkgraph/transports"
)

// testTransports: forkgraph's websocket (graphql-transport-ws on gorilla/websocket) SSE and HTTP,
// each leaving deferred fields out of a first payload as the server's do.
func testTransports(tokens access.Tokens) []graphql.Transport {
	deferral := transports.Deferral{Schema: resolvers.Schema(), Later: resolvers.ResolvedLater}
	return []graphql.Transport{
		transports.Websocket{InitFunc: func(ctx context.Context, payload map[string]any) (context.Context, *map[string]any, error) {
			ctx, err := tokens.WebsocketInit(ctx, payload)
			return ctx, nil, err
		}, Deferral: deferral},
		transports.SSE{Deferral: deferral},
		transports.HTTP{Deferral: deferral},
	}
}
