package resolvers_test

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"

	"github.com/forkgraph/forkgraph/resolvers"
)

// testTransports: gqlgen's websocket transport on gorilla/websocket, and POST.
func testTransports(tokens resolvers.Tokens) []graphql.Transport {
	return []graphql.Transport{
		transport.Websocket{
			Implementation: gorillaWebsocket{},
			InitFunc: func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
				ctx, err := tokens.WebsocketInit(ctx, p)
				return ctx, nil, err
			},
		},
		transport.POST{},
	}
}

type gorillaWebsocket struct{}

func (gorillaWebsocket) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	up := websocket.Upgrader{Subprotocols: opts.Subprotocols}
	c, err := up.Upgrade(w, r, opts.ResponseHeader)
	if err != nil {
		return nil, err
	}
	return gorillaConn{c}, nil
}

type gorillaConn struct{ *websocket.Conn }

func (c gorillaConn) NextReader() (int, io.Reader, error) {
	t, r, err := c.Conn.NextReader()
	var ce *websocket.CloseError
	if errors.As(err, &ce) && (ce.Code == websocket.CloseNormalClosure || ce.Code == websocket.CloseNoStatusReceived) {
		return t, r, transport.ErrWebsocketClosed
	}
	return t, r, err
}

func (c gorillaConn) WriteClose(code int, message string) error {
	return c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(code, message))
}
