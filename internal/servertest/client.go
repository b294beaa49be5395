package servertest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

// Client runs GraphQL over HTTP with a bearer token and optional extra headers.
type Client struct {
	T      *testing.T
	Base   string // the server's URL
	Token  string // sent as "Authorization: Bearer"; empty: none
	Header http.Header
}

// Do posts one operation and returns its data and error codes.
func (c Client) Do(query string, vars map[string]any, out any) []string {
	c.T.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(c.T, err)
	req, err := http.NewRequest(http.MethodPost, c.Base+"/graphql", bytes.NewReader(body))
	require.NoError(c.T, err)
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range c.Header {
		req.Header[k] = vs
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.T, err)
	defer resp.Body.Close()
	var envelope struct {
		Data   json.RawMessage
		Errors []struct{ Extensions struct{ Code string } }
	}
	require.NoError(c.T, json.NewDecoder(resp.Body).Decode(&envelope))
	var codes []string
	for _, e := range envelope.Errors {
		codes = append(codes, e.Extensions.Code)
	}
	if out != nil && len(codes) == 0 {
		require.NoError(c.T, json.Unmarshal(envelope.Data, out))
	}
	return codes
}

// Must runs an operation that must succeed.
func (c Client) Must(query string, vars map[string]any, out any) {
	c.T.Helper()
	require.Empty(c.T, c.Do(query, vars, out), "query: %s", query)
}

// FollowFork subscribes to one fork operation over a websocket (the token and the init payload's
// extra fields in connection_init), returns the phases received until the stream completes, and
// closes the connection normally (1000).
func (c Client) FollowFork(ws, id string, initExtra map[string]any) []string {
	c.T.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(c.Base, "http")+"/graphql", nil)
	require.NoError(c.T, err)
	_ = resp.Body.Close()
	defer conn.Close()
	payload := map[string]any{}
	if c.Token != "" {
		payload["authorization"] = "Bearer " + c.Token
	}
	for k, v := range initExtra {
		payload[k] = v
	}
	type message struct {
		ID, Type string
		Payload  json.RawMessage
	}
	read := func() message {
		require.NoError(c.T, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
		var m message
		require.NoError(c.T, conn.ReadJSON(&m))
		return m
	}
	require.NoError(c.T, conn.WriteJSON(map[string]any{"type": "connection_init", "payload": payload}))
	require.Equal(c.T, "connection_ack", read().Type)
	require.NoError(c.T, conn.WriteJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
		"query":     `subscription Follow($ws: ID!, $id: ID!) { forkOperationUpdated(workspaceId: $ws, id: $id) { phase } }`,
		"variables": map[string]any{"ws": ws, "id": id},
	}}))
	var phases []string
	for {
		m := read()
		switch m.Type {
		case "ping":
			require.NoError(c.T, conn.WriteJSON(map[string]any{"type": "pong"}))
		case "next":
			var p struct {
				Data struct{ ForkOperationUpdated struct{ Phase string } }
			}
			require.NoError(c.T, json.Unmarshal(m.Payload, &p))
			phases = append(phases, p.Data.ForkOperationUpdated.Phase)
		case "complete":
			_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "done"),
				time.Now().Add(time.Second))
			return phases
		default:
			c.T.Fatalf("unexpected %s: %s", m.Type, m.Payload)
		}
	}
}

// FollowSSE subscribes to one fork operation over server-sent events and returns how many `next`
// events arrived before `complete`.
func (c Client) FollowSSE(ws, id string) int {
	c.T.Helper()
	body, err := json.Marshal(map[string]any{
		"query":     `subscription FollowSSE($ws: ID!, $id: ID!) { forkOperationUpdated(workspaceId: $ws, id: $id) { phase } }`,
		"variables": map[string]any{"ws": ws, "id": id},
	})
	require.NoError(c.T, err)
	req, err := http.NewRequest(http.MethodPost, c.Base+"/graphql", bytes.NewReader(body))
	require.NoError(c.T, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.T, err)
	defer resp.Body.Close()
	require.Equal(c.T, http.StatusOK, resp.StatusCode)
	stream, err := io.ReadAll(resp.Body) // the server ends the stream after complete
	require.NoError(c.T, err)
	require.Contains(c.T, string(stream), "event: complete")
	return strings.Count(string(stream), "event: next")
}
