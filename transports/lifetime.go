package transports

import (
	"context"

	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Lifetime says how long the credential a stream was opened with stays valid: it returns a
// context that ends then, whose cause (an error carrying its GraphQL extensions, such as
// access's TOKEN_EXPIRED and TOKEN_REVOKED) the stream ends with, and the function that releases
// it; nil contexts when the credential never ends. ctx is the connection's (the websocket's once
// connection_init is accepted, an SSE stream's request). forkgraph passes access.StreamLifetime.
//
// When it ends, a websocket closes with 4403 and the error's code as the close reason (the
// legacy protocol sends a connection_error with the error first); an SSE stream (either mode)
// sends each of its subscriptions a last `next` event carrying the error, then `complete`, and
// ends. Queries over SSE finish as they would.
type Lifetime func(ctx context.Context) (context.Context, context.CancelFunc)

// lifetimeError is the GraphQL error a stream whose credential ended ends with.
func lifetimeError(life context.Context) *gqlerror.Error {
	return asGraphQLError(context.Cause(life), "FORBIDDEN")
}

// closeReasonOf is the close reason of a websocket whose credential ended: the error's code.
func closeReasonOf(err *gqlerror.Error) string {
	if code, _ := err.Extensions["code"].(string); code != "" {
		return code
	}
	return "Forbidden"
}

// watchLifetime arms the end of a websocket at the end of its credential (cfg.Lifetime), once
// connection_init is accepted with base as the operations' context.
func (c *conn) watchLifetime(base context.Context) {
	if c.cfg.Lifetime == nil {
		return
	}
	life, release := c.cfg.Lifetime(base)
	if life == nil {
		return
	}
	stop := context.AfterFunc(life, func() { c.protocol.credentialEnded(c, lifetimeError(life)) })
	c.mu.Lock()
	c.releaseLifetime = func() {
		stop()
		release()
	}
	c.mu.Unlock()
}

// credentialEnded closes a graphql-transport-ws connection whose credential ended: 4403 with
// the error's code as the reason, which graphql-ws clients receive as the close event's reason.
func (transportProtocol) credentialEnded(c *conn, err *gqlerror.Error) {
	c.close(CloseForbidden, closeReasonOf(err))
}

// credentialEnded tells a legacy client why in a connection_error, then closes with 4403.
func (legacyProtocol) credentialEnded(c *conn, err *gqlerror.Error) {
	c.send(mustEncode("", "connection_error", err))
	c.close(CloseForbidden, closeReasonOf(err))
}
