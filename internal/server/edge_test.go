package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

// edgeRequest sends a query to base with the given Host and Origin and returns status and the
// first error's code.
func edgeRequest(t *testing.T, method, base, host, origin string, header ...string) (int, string, http.Header) {
	t.Helper()
	body := `{"query":"{ sessions(workspaceId: \"demo\") { totalCount } }"}`
	req, err := http.NewRequest(method, base+"/graphql", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out struct {
		Data   map[string]any
		Errors []struct{ Extensions map[string]any }
	}
	raw, _ := io.ReadAll(resp.Body)
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	}
	code := ""
	if len(out.Errors) > 0 {
		code, _ = out.Errors[0].Extensions["code"].(string)
		require.Nil(t, out.Data, "a refused request leaks no data")
	}
	return resp.StatusCode, code, resp.Header
}

// Issue 10's DNS rebinding reproduction against the real server in open mode, and the Origin
// allow-list over HTTP, SSE and the websocket upgrade alike.
func TestEdgeRefusesRebindingAndForeignOrigins(t *testing.T) {
	t.Parallel()
	base, _ := startServer(t, filepath.Join(t.TempDir(), "f.db"), "-cors-origins", "http://app.example:3000")
	host := strings.TrimPrefix(base, "http://")

	status, code, _ := edgeRequest(t, http.MethodPost, base, "evil.example:8080", "http://evil.example:8080")
	require.Equal(t, http.StatusForbidden, status)
	require.Equal(t, "HOST_NOT_ALLOWED", code)
	status, code, _ = edgeRequest(t, http.MethodPost, base, "localhost"+host[strings.LastIndex(host, ":"):], "")
	require.Equal(t, http.StatusOK, status, "localhost is a loopback name")
	require.Empty(t, code)

	status, code, _ = edgeRequest(t, http.MethodPost, base, "", "http://evil.example:8080")
	require.Equal(t, http.StatusForbidden, status)
	require.Equal(t, "ORIGIN_NOT_ALLOWED", code)
	status, code, _ = edgeRequest(t, http.MethodPost, base, "", "http://evil.example:8080", "Accept", "text/event-stream")
	require.Equal(t, http.StatusForbidden, status, "SSE too")
	require.Equal(t, "ORIGIN_NOT_ALLOWED", code)
	status, _, h := edgeRequest(t, http.MethodOptions, base, "", "http://app.example:3000",
		"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type")
	require.Equal(t, http.StatusNoContent, status)
	require.Equal(t, "http://app.example:3000", h.Get("Access-Control-Allow-Origin"))
	status, code, h = edgeRequest(t, http.MethodPost, base, "", "http://app.example:3000")
	require.Equal(t, http.StatusOK, status)
	require.Empty(t, code)
	require.Equal(t, "http://app.example:3000", h.Get("Access-Control-Allow-Origin"))
	status, _, _ = edgeRequest(t, http.MethodPost, base, "", base)
	require.Equal(t, http.StatusOK, status, "the server's own origin (the playground)")
	status, code, _ = edgeRequest(t, http.MethodPost, base, "", "http://127.0.0.1:1")
	require.Equal(t, http.StatusForbidden, status, "a page on another port of the server's host is another origin")
	require.Equal(t, "ORIGIN_NOT_ALLOWED", code)

	dial := func(origin string) (int, error) {
		d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
		conn, resp, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+"/graphql", http.Header{"Origin": {origin}})
		if conn != nil {
			_ = conn.Close()
		}
		if resp == nil {
			return 0, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode, err
	}
	status, err := dial("http://evil.example:8080")
	require.Error(t, err)
	require.Equal(t, http.StatusForbidden, status)
	status, err = dial("http://app.example:3000")
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, status)
}
