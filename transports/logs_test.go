package transports

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/internal/await"
)

// lockedBuffer is a log sink written by the connection's goroutines and read by the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Split(strings.TrimSpace(b.buf.String()), "\n")
}

// What the websocket transport cannot tell a client (here a resolver's panic, which closes the
// connection with 4500) goes to the transport's slog logger with the upgrade request's id, as
// every other server log line, not to the standard log package.
func TestTransportWS_LogsThroughSlogWithTheRequestID(t *testing.T) {
	sink := &lockedBuffer{}
	logger := slog.New(slog.NewJSONHandler(sink, nil))
	srv := streamHandler(streamSchema(newStreamHooks()))
	srv.AddTransport(Websocket{Logger: logger, RequestID: access.RequestID})
	hs := httptest.NewServer(access.RequestIDs(srv))
	t.Cleanup(hs.Close)
	d := websocket.Dialer{Subprotocols: []string{SubprotocolTransportWS}, HandshakeTimeout: 5 * time.Second}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(hs.URL, "http"), http.Header{"X-Request-Id": {"req-logs-1"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	t.Cleanup(func() { conn.Close() })
	c := &client{t: t, conn: conn}
	c.initialise()
	c.subscribe("x", "subscription { explode }")
	c.expectClose(CloseInternalError, "Internal server error")

	var entry map[string]any
	await.State(t, 5*time.Second, "the panic logged", func() (bool, string) {
		for _, line := range sink.lines() {
			var e map[string]any
			if json.Unmarshal([]byte(line), &e) == nil && e["msg"] == "transports: panic in websocket operation" {
				entry = e
				return true, ""
			}
		}
		return false, strings.Join(sink.lines(), "\n")
	})
	if entry["requestId"] != "req-logs-1" || entry["operation"] != "x" || entry["level"] != "ERROR" ||
		!strings.Contains(entry["panic"].(string), "resolver exploded") {
		t.Fatalf("log entry %v", entry)
	}
}
