package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/store"
)

// Issue 10: a request still being answered at SIGTERM was cancelled (the client got "the
// operation produced no result"). Now shutdown stops accepting and lets it finish, with its
// context intact, before serve returns.
func TestShutdownLetsInFlightRequestsFinish(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, err := store.Open(ctx, store.Config{Driver: "sqlite", DSN: filepath.Join(t.TempDir(), "d.db"), Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	engine, err := forkengine.New(forkengine.Config{Store: db, Drivers: map[string]forkengine.Driver{}, Logger: quiet})
	require.NoError(t, err)

	started, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		select {
		case <-release:
			_, _ = io.WriteString(w, "finished")
		case <-r.Context().Done():
			http.Error(w, "cancelled", http.StatusServiceUnavailable)
		}
	})
	obs, err := newObservability(ctx, observeConfig{}, func(string) string { return "" }, quiet, db)
	require.NoError(t, err)
	cfg := config{addr: "127.0.0.1:0"}
	lns, err := listen(cfg)
	require.NoError(t, err)
	stdout, lines := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- serve(ctx, cfg, lns, h, engine, obs, lines, quiet)
		_ = lines.Close()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	_, rest, _ := strings.Cut(line, "http://")
	addr := strings.TrimSuffix(strings.Fields(rest)[0], "/")

	answer := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + addr + "/slow")
		if err != nil {
			answer <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		answer <- string(body)
	}()
	<-started
	cancel() // SIGTERM
	// Shutdown closes the listener first: once a dial is refused, the drain has begun.
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		_ = conn.Close()
	}
	close(release)
	require.Equal(t, "finished", <-answer)
	require.NoError(t, <-served)
}

var quiet = slog.New(slog.DiscardHandler)

// At shutdown the real server ends an SSE stream with `complete` (and a websocket with 1001)
// rather than cutting it, and run returns.
func TestShutdownEndsStreamsCleanly(t *testing.T) {
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
