package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/transports"
)

// Through the real server's edge, graphql-sse single-connection mode follows the workspace
// token rules: the reservation is bound to the bearer token that made it (another token finds
// no stream), an operation on the token's workspace runs, and one on another workspace is a
// FORBIDDEN execution error on the stream, as over HTTP and websockets.
func TestServerSSESingleConnectionTokens(t *testing.T) {
	base, _ := startServer(t, filepath.Join(t.TempDir(), "fg.db"), "-tokens", "tokA=demo,tokB=other")
	endpoint := base + "/graphql"
	send := func(method, target, auth, token, body string) (*http.Response, string) {
		req, err := http.NewRequest(method, target, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", auth)
		if token != "" {
			req.Header.Set(transports.TokenHeader, token)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(b)
	}
	resp, token := send(http.MethodPut, endpoint, "Bearer tokA", "", "")
	require.Equal(t, http.StatusCreated, resp.StatusCode, token)

	resp, body := send(http.MethodGet, endpoint, "Bearer tokB", token, "")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Contains(t, body, `"code":"NOT_FOUND"`)

	req, err := http.NewRequest(http.MethodGet, endpoint+"?token="+token, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer tokA")
	stream, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer stream.Body.Close()
	require.Equal(t, http.StatusOK, stream.StatusCode)

	op := func(id, ws string) string {
		b, _ := json.Marshal(map[string]any{"query": `query($ws: ID!) { sessions(workspaceId: $ws) { totalCount } }`,
			"variables": map[string]any{"ws": ws}, "extensions": map[string]any{"operationId": id}})
		return string(b)
	}
	resp, body = send(http.MethodPost, endpoint, "Bearer tokA", token, op("own", "demo"))
	require.Equal(t, http.StatusAccepted, resp.StatusCode, body)
	resp, body = send(http.MethodPost, endpoint, "Bearer tokA", token, op("foreign", "other"))
	require.Equal(t, http.StatusAccepted, resp.StatusCode, body)

	payloads := map[string]string{}
	lines := make(chan string)
	go func() {
		defer close(lines)
		scanner := bufio.NewScanner(stream.Body)
		for scanner.Scan() {
			lines <- scanner.Text()
		}
	}()
	for completes := 0; completes < 2; {
		select {
		case line, ok := <-lines:
			require.True(t, ok, "the stream ended early")
			data, isData := strings.CutPrefix(line, "data: ")
			if !isData {
				continue
			}
			var ev struct {
				ID      string          `json:"id"`
				Payload json.RawMessage `json:"payload"`
			}
			require.NoError(t, json.Unmarshal([]byte(data), &ev), data)
			if ev.Payload == nil {
				completes++
			} else {
				payloads[ev.ID] = string(ev.Payload)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no event")
		}
	}
	require.Contains(t, payloads["own"], `"totalCount"`)
	require.NotContains(t, payloads["own"], `"errors"`)
	require.Contains(t, payloads["foreign"], `"code":"FORBIDDEN"`)
}
