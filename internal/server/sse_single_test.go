package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/transports"
)

// ssePeer drives graphql-sse single-connection mode against a real server with one
// Authorization value.
type ssePeer struct {
	t              *testing.T
	endpoint, auth string
}

func (p ssePeer) send(method, target, token, body string) (*http.Response, string) {
	p.t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	require.NoError(p.t, err)
	if p.auth != "" {
		req.Header.Set("Authorization", p.auth)
	}
	if token != "" {
		req.Header.Set(transports.TokenHeader, token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(p.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(p.t, err)
	return resp, string(b)
}

// run reserves a stream, opens it, starts one sessions query per id → workspace and returns
// each operation's payload once every operation has completed.
func (p ssePeer) run(workspaces map[string]string) map[string]string {
	t := p.t
	t.Helper()
	resp, token := p.send(http.MethodPut, p.endpoint, "", "")
	require.Equal(t, http.StatusCreated, resp.StatusCode, token)
	req, err := http.NewRequest(http.MethodGet, p.endpoint+"?token="+token, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	if p.auth != "" {
		req.Header.Set("Authorization", p.auth)
	}
	stream, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer stream.Body.Close()
	require.Equal(t, http.StatusOK, stream.StatusCode)
	for id, ws := range workspaces {
		b, _ := json.Marshal(map[string]any{"query": `query($ws: ID!) { sessions(workspaceId: $ws) { totalCount } }`,
			"variables": map[string]any{"ws": ws}, "extensions": map[string]any{"operationId": id}})
		resp, body := p.send(http.MethodPost, p.endpoint, token, string(b))
		require.Equal(t, http.StatusAccepted, resp.StatusCode, body)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		scanner := bufio.NewScanner(stream.Body)
		for scanner.Scan() {
			lines <- scanner.Text()
		}
	}()
	payloads := map[string]string{}
	for completes := 0; completes < len(workspaces); {
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
	return payloads
}

// Through the real server's edge, graphql-sse single-connection mode follows the workspace
// token rules: the reservation is bound to the bearer token that made it (another token finds
// no stream), an operation on the token's workspace runs, one on another workspace is a
// FORBIDDEN execution error on the stream, and without a valid token UNAUTHENTICATED, as over
// HTTP and websockets.
func TestServerSSESingleConnectionTokens(t *testing.T) {
	t.Parallel()
	base, _ := startServer(t, filepath.Join(t.TempDir(), "fg.db"), "-tokens", "token-a-0123456789=demo,token-b-0123456789=other")
	endpoint := base + "/graphql"
	alpha := ssePeer{t: t, endpoint: endpoint, auth: "Bearer token-a-0123456789"}

	resp, token := alpha.send(http.MethodPut, endpoint, "", "")
	require.Equal(t, http.StatusCreated, resp.StatusCode, token)
	for _, other := range []string{"Bearer token-b-0123456789", ""} {
		resp, body := ssePeer{t: t, endpoint: endpoint, auth: other}.send(http.MethodGet, endpoint, token, "")
		require.Equal(t, http.StatusNotFound, resp.StatusCode, "Authorization %q", other)
		require.Contains(t, body, `"code":"NOT_FOUND"`)
	}

	payloads := alpha.run(map[string]string{"own": "demo", "foreign": "other"})
	require.Contains(t, payloads["own"], `"totalCount"`)
	require.NotContains(t, payloads["own"], `"errors"`)
	require.Contains(t, payloads["foreign"], `"code":"FORBIDDEN"`)

	for _, auth := range []string{"", "Bearer nope"} {
		payloads := ssePeer{t: t, endpoint: endpoint, auth: auth}.run(map[string]string{"anon": "demo"})
		require.Contains(t, payloads["anon"], `"code":"UNAUTHENTICATED"`, "Authorization %q", auth)
	}
}

// putReservation sends a single-connection PUT with the given headers and returns its status.
func putReservation(t *testing.T, endpoint string, header http.Header) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, endpoint, nil)
	require.NoError(t, err)
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// A client without a valid token cannot take more than its address's bound of reservations
// (MaxPerClient, 16) by varying a bogus Authorization, so it cannot fill the server's bound
// (4096) either: a client with a valid token still gets one.
func TestServerSSEReservationsWithoutAValidTokenShareTheAddressBound(t *testing.T) {
	// Not parallel: its 4,096 PUTs must finish within the reservations' 15 s TTL (an expired one
	// frees a place and a 17th is granted), which a server working beside it on two cores under
	// the race detector made it miss.
	base, _ := startServer(t, filepath.Join(t.TempDir(), "fg.db"), "-tokens", "token-a-0123456789=demo",
		"-rate-limit", "100000", "-rate-burst", "100000")
	endpoint := base + "/graphql"
	granted := 0
	for i := range transports.DefaultMaxReservations {
		if putReservation(t, endpoint, http.Header{"Authorization": {fmt.Sprintf("Bearer bogus-%d", i)}}) == http.StatusCreated {
			granted++
		}
	}
	require.Equal(t, http.StatusCreated, putReservation(t, endpoint, http.Header{"Authorization": {"Bearer token-a-0123456789"}}),
		"a valid token's reservation, after one address took %d with bogus tokens", granted)
	require.Equal(t, transports.DefaultMaxReservationsPerClient, granted,
		"reservations one address got with bogus tokens")
}

// Behind a trusted proxy, the per-client bound of a client without a valid token is its
// address as the edge resolves it (the right-most untrusted X-Forwarded-For entry): clients
// behind one proxy do not share a bound, and varying the token does not escape one.
func TestServerSSEReservationsKeyedOnTheForwardedClient(t *testing.T) {
	t.Parallel()
	base, _ := startServer(t, filepath.Join(t.TempDir(), "fg.db"), "-tokens", "token-a-0123456789=demo",
		"-trusted-proxies", "127.0.0.1", "-rate-limit", "100000", "-rate-burst", "100000")
	endpoint := base + "/graphql"
	from := func(client, auth string) int {
		return putReservation(t, endpoint, http.Header{"X-Forwarded-For": {client}, "Authorization": {auth}})
	}
	bound := transports.DefaultMaxReservationsPerClient
	for i := range bound {
		require.Equal(t, http.StatusCreated, from("203.0.113.1", fmt.Sprintf("Bearer bogus-%d", i)), "reservation %d", i)
	}
	require.Equal(t, http.StatusTooManyRequests, from("203.0.113.1", "Bearer bogus-more"), "a new bogus token from the same client")
	require.Equal(t, http.StatusTooManyRequests, from("198.51.100.9, 203.0.113.1", "Bearer bogus-forged"),
		"a forged entry left of the proxy's")
	require.Equal(t, http.StatusCreated, from("203.0.113.2", "Bearer bogus-0"), "another client behind the proxy")
	require.Equal(t, http.StatusCreated, from("203.0.113.1", "Bearer token-a-0123456789"), "a valid token has its own bound")
}
