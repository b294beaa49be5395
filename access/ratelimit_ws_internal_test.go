package access

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/testserver"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/transports"
)

// A websocket's operations draw on its token's bucket, the one that token's HTTP requests
// draw on: a socket cannot be used to get around the per-token limit (SPEC §8).
func TestRateLimitChargesEveryWebsocketOperationToItsToken(t *testing.T) {
	t.Parallel()
	auth := testAuthenticator(t, "token-a-0123456789=wa")
	limit := NewRateLimit(nil, 0.001, 3) // no refill within the test
	gql := testserver.New()
	gql.AddTransport(transports.Websocket{
		InitFunc: func(ctx context.Context, payload map[string]any) (context.Context, *map[string]any, error) {
			ctx, err := auth.WebsocketInit(ctx, payload)
			return BindWebsocketRateLimit(ctx), nil, err
		},
		OperationLimiter: LimitWebsocketOperation,
	})
	gql.AddTransport(transports.HTTP{})
	srv := httptest.NewServer(auth.HTTPMiddleware(limit.HTTPMiddleware(gql)))
	t.Cleanup(srv.Close)

	post := func() int {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"query":"{ name }"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer token-a-0123456789")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, post(), "tokA: 2 of 3 left")

	// The upgrade request carries no token: it is charged to the address, not to tokA.
	dialer := websocket.Dialer{Subprotocols: []string{transports.SubprotocolTransportWS}}
	ws, resp, err := dialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	t.Cleanup(func() { _ = ws.Close() })
	send := func(msg map[string]any) { require.NoError(t, ws.WriteJSON(msg)) }
	type message struct {
		ID, Type string
		Payload  json.RawMessage
	}
	read := func() message {
		require.NoError(t, ws.SetReadDeadline(time.Now().Add(5*time.Second)))
		var m message
		require.NoError(t, ws.ReadJSON(&m))
		return m
	}
	send(map[string]any{"type": "connection_init", "payload": map[string]any{"authorization": "Bearer token-a-0123456789"}})
	require.Equal(t, "connection_ack", read().Type)

	for _, id := range []string{"1", "2", "3"} {
		send(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": "{ name }"}})
	}
	ended := map[string]message{}
	for len(ended) < 3 {
		if m := read(); m.Type == "complete" || m.Type == "error" {
			ended[m.ID] = m
		}
	}
	require.Equal(t, "complete", ended["1"].Type)
	require.Equal(t, "complete", ended["2"].Type, "tokA's bucket is now empty")
	require.Equal(t, "error", ended["3"].Type)
	var errs []struct{ Extensions map[string]any }
	require.NoError(t, json.Unmarshal(ended["3"].Payload, &errs))
	require.Equal(t, "RATE_LIMITED", errs[0].Extensions["code"])
	require.Equal(t, true, errs[0].Extensions["retryable"])

	send(map[string]any{"type": "ping"})
	require.Equal(t, "pong", read().Type, "the connection stays open")
	require.Equal(t, http.StatusTooManyRequests, post(), "the socket spent tokA's HTTP budget too")
}

// Without a limiter in the connection's context (open mode) operations are never refused.
func TestLimitWebsocketOperationWithoutALimiter(t *testing.T) {
	t.Parallel()
	ctx := BindWebsocketRateLimit(context.Background())
	for range 100 {
		require.NoError(t, LimitWebsocketOperation(ctx))
	}
}
