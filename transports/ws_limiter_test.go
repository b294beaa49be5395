package transports

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/vektah/gqlparser/v2/gqlerror"
)

// OperationLimiter refuses single operations with their own error and keeps the connection,
// on both subprotocols; it sees the context InitFunc returned.
func TestWebsocket_OperationLimiterRefusesAnOperationNotTheConnection(t *testing.T) {
	type clientKey struct{}
	var mu sync.Mutex
	allowed := map[string]int{}
	ws := Websocket{
		InitFunc: func(ctx context.Context, p map[string]any) (context.Context, *map[string]any, error) {
			return context.WithValue(ctx, clientKey{}, p["client"]), nil, nil
		},
		OperationLimiter: func(ctx context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			client := ctx.Value(clientKey{}).(string)
			if allowed[client] == 2 {
				return &gqlerror.Error{Message: "slow down", Extensions: map[string]any{"code": "RATE_LIMITED", "retryable": true}}
			}
			allowed[client]++
			return nil
		},
	}
	_, url := newStreamServer(t, ws)
	for _, protocol := range []string{SubprotocolTransportWS, SubprotocolLegacyWS} {
		c := dial(t, url, protocol)
		c.send(map[string]any{"type": "connection_init", "payload": map[string]any{"client": protocol}})
		c.expect("connection_ack", "")
		if protocol == SubprotocolLegacyWS {
			c.expect("ka", "")
		}
		for _, id := range []string{"1", "2", "3"} {
			typ := "subscribe"
			if protocol == SubprotocolLegacyWS {
				typ = "start"
			}
			c.send(map[string]any{"id": id, "type": typ, "payload": map[string]any{"query": "query { hello }"}})
		}
		ended := map[string]string{}
		for len(ended) < 3 {
			switch m := c.read(); m.Type {
			case "complete":
				ended[m.ID] = "complete"
			case "error":
				if !strings.Contains(string(m.Payload), `"code":"RATE_LIMITED"`) || !strings.Contains(string(m.Payload), `"retryable":true`) {
					t.Fatalf("%s: error for %s: %s", protocol, m.ID, m.Payload)
				}
				ended[m.ID] = "error"
			}
		}
		if ended["1"] != "complete" || ended["2"] != "complete" || ended["3"] != "error" {
			t.Fatalf("%s: operations ended %v, want the third refused", protocol, ended)
		}
		if protocol == SubprotocolTransportWS {
			c.expectQuiet() // still open: the ping is answered
		} else {
			c.send(map[string]any{"id": "4", "type": "start", "payload": map[string]any{"query": "query { hello }"}})
			c.expect("error", "4") // still open, still limited
		}
	}
}
