package resolvers_test

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/resolvers"
	"github.com/forkgraph/forkgraph/transports"
)

// testTransports: forkgraph's websocket (graphql-transport-ws on gorilla/websocket) SSE and HTTP,
// each leaving deferred fields out of a first payload and ending its streams with their
// credential as the server's do.
func testTransports(auth *access.Authenticator) []graphql.Transport {
	deferral := transports.Deferral{Schema: resolvers.Schema(), Later: resolvers.ResolvedLater}
	return []graphql.Transport{
		transports.Websocket{InitFunc: func(ctx context.Context, payload map[string]any) (context.Context, *map[string]any, error) {
			ctx, err := auth.WebsocketInit(ctx, payload)
			return ctx, nil, err
		}, Deferral: deferral, Lifetime: access.StreamLifetime},
		transports.SSE{Deferral: deferral, Lifetime: access.StreamLifetime, Single: &transports.Reservations{}},
		transports.HTTP{Deferral: deferral},
	}
}
