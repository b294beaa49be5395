package server_test

import (
	"bufio"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

// At shutdown the real server ends an SSE stream with `complete` (and a websocket with 1001)
// rather than cutting it, and run returns.
func TestShutdownEndsStreamsCleanly(t *testing.T) {
	t.Parallel()
	base, stop := startServer(t, filepath.Join(t.TempDir(), "f.db"))
	req, err := http.NewRequest(http.MethodPost, base+"/graphql",
		strings.NewReader(`{"query":"subscription { workspaceEvents(workspaceId: \"demo\") { cursor } }"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
	conn, wsResp, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+"/graphql", nil)
	require.NoError(t, err)
	_ = wsResp.Body.Close()
	defer conn.Close()
	require.NoError(t, conn.WriteJSON(map[string]any{"type": "connection_init"}))
	var ack struct{ Type string }
	require.NoError(t, conn.ReadJSON(&ack))
	require.Equal(t, "connection_ack", ack.Type)

	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	events := bufio.NewScanner(resp.Body)
	last := ""
	for events.Scan() {
		if name, ok := strings.CutPrefix(events.Text(), "event: "); ok {
			last = name
		}
	}
	require.Equal(t, "complete", last, "the stream ended with complete")
	_, _, err = conn.ReadMessage()
	var closeErr *websocket.CloseError
	require.ErrorAs(t, err, &closeErr)
	require.Equal(t, websocket.CloseGoingAway, closeErr.Code)
	require.NoError(t, <-stopped)
}
