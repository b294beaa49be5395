package resolvers_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

// wsClient speaks graphql-transport-ws over a real websocket.
type wsClient struct {
	t    *testing.T
	conn *websocket.Conn
}

type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// wsReadTimeout bounds one read: a message that never comes fails the test instead of hanging it.
const wsReadTimeout = 10 * time.Second

// dialWS connects and completes connection_init with the payload (nil: none).
func (a *testAPI) dialWS(payload map[string]any) *wsClient {
	a.t.Helper()
	c := a.dialWSRaw(payload)
	ack := c.read()
	require.Equal(a.t, "connection_ack", ack.Type, "payload: %s", ack.Payload)
	return c
}

// dialWSRaw connects (with the given upgrade headers, if any) and sends connection_init without
// waiting for the answer.
func (a *testAPI) dialWSRaw(payload map[string]any, headers ...http.Header) *wsClient {
	a.t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
	header := http.Header{}
	for _, h := range headers {
		header = h
	}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(a.url, "http")+"/graphql", header)
	require.NoError(a.t, err)
	_ = resp.Body.Close()
	c := &wsClient{t: a.t, conn: conn}
	a.t.Cleanup(func() { _ = conn.Close() })
	init := map[string]any{"type": "connection_init"}
	if payload != nil {
		init["payload"] = payload
	}
	require.NoError(a.t, conn.WriteJSON(init))
	return c
}

func (c *wsClient) subscribe(id, query string, vars map[string]any) {
	c.t.Helper()
	require.NoError(c.t, c.conn.WriteJSON(map[string]any{
		"id": id, "type": "subscribe", "payload": map[string]any{"query": query, "variables": vars},
	}))
}

// read returns the next message, skipping pings.
func (c *wsClient) read() wsMessage {
	c.t.Helper()
	for {
		require.NoError(c.t, c.conn.SetReadDeadline(time.Now().Add(wsReadTimeout)))
		var m wsMessage
		require.NoError(c.t, c.conn.ReadJSON(&m))
		if m.Type == "ping" {
			require.NoError(c.t, c.conn.WriteJSON(map[string]any{"type": "pong"}))
			continue
		}
		if m.Type != "pong" {
			return m
		}
	}
}

// nextData reads the next message of id, requires it to be `next` without errors, and decodes
// its data into out.
func (c *wsClient) nextData(id string, out any) {
	c.t.Helper()
	m := c.read()
	require.Equal(c.t, id, m.ID)
	require.Equal(c.t, "next", m.Type, "payload: %s", m.Payload)
	var p struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlError      `json:"errors"`
	}
	require.NoError(c.t, json.Unmarshal(m.Payload, &p))
	require.Empty(c.t, p.Errors)
	require.NoError(c.t, json.Unmarshal(p.Data, out))
}

// streamError reads messages of id until the stream reports an error (an `error` message, or a
// `next` carrying only errors) and returns its errors.
func (c *wsClient) streamError(id string) []gqlError {
	c.t.Helper()
	m := c.read()
	require.Equal(c.t, id, m.ID)
	return streamErrorOf(c.t, m)
}

// complete requires the next message of id to be `complete`.
func (c *wsClient) complete(id string) {
	c.t.Helper()
	m := c.read()
	require.Equal(c.t, id, m.ID)
	require.Equal(c.t, "complete", m.Type, "payload: %s", m.Payload)
}

func hasErrors(m wsMessage) bool {
	var p struct {
		Errors []gqlError `json:"errors"`
	}
	_ = json.Unmarshal(m.Payload, &p)
	return len(p.Errors) > 0
}

// streamErrorOf returns the errors of an `error` message or of a `next` carrying errors.
func streamErrorOf(t *testing.T, m wsMessage) []gqlError {
	t.Helper()
	var errs []gqlError
	switch m.Type {
	case "error":
		require.NoError(t, json.Unmarshal(m.Payload, &errs))
	case "next":
		var p struct {
			Errors []gqlError `json:"errors"`
		}
		require.NoError(t, json.Unmarshal(m.Payload, &p))
		errs = p.Errors
	default:
		t.Fatalf("want an error, got %s %s", m.Type, m.Payload)
	}
	require.NotEmpty(t, errs)
	return errs
}
