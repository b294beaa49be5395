package resolvers_test

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/transports"
)

// testTransports: forkgraph's websocket (graphql-transport-ws on gorilla/websocket) SSE and HTTP.
func testTransports(tokens access.Tokens) []graphql.Transport {
	return []graphql.Transport{
		transports.Websocket{InitFunc: func(ctx context.Context, payload map[string]any) (context.Context, *map[string]any, error) {
			ctx, err := tokens.WebsocketInit(ctx, payload)
			return ctx, nil, err
		}},
		transports.SSE{},
		transports.HTTP{},
	}
}
