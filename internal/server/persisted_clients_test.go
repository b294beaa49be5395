package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

// postAs is postJSON with "Authorization: Bearer token" (none when token is "").
func postAs(t *testing.T, base, token string, body map[string]any) (int, gqlResponse) {
	t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out gqlResponse
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

// wsPersisted runs the persisted query hash over a websocket whose connection_init presents
// token and returns the first error code of its answer ("" when it ran).
func wsPersisted(t *testing.T, base, token, hash string) string {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+"/graphql", nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	defer conn.Close()
	require.NoError(t, conn.WriteJSON(map[string]any{"type": "connection_init",
		"payload": map[string]any{"authorization": "Bearer " + token}}))
	require.Equal(t, "connection_ack", readWS(t, conn).Type)
	require.NoError(t, conn.WriteJSON(map[string]any{"id": "1", "type": "subscribe",
		"payload": map[string]any{"extensions": persistedExt(hash)}}))
	m := readWS(t, conn)
	var payload gqlResponse
	switch m.Type {
	case "next":
		require.NoError(t, json.Unmarshal(m.Payload, &payload))
	case "error":
		require.NoError(t, json.Unmarshal(m.Payload, &payload.Errors))
	default:
		t.Fatalf("unexpected %s: %s", m.Type, m.Payload)
	}
	return payload.code()
}

// Issue 21: the APQ cache was one for every tenant. A hash workspace A had run answered B with
// FORBIDDEN (B's request ran A's document, which names A), any other hash with
// PERSISTED_QUERY_NOT_FOUND, so B could tell whether A ran an exact document; and registering
// documents flushed everyone's. Now a hash names a document for the client that registered it
// only (its token, over HTTP and websockets alike), another client's miss is a plain miss, and a
// client that floods the cache pushes out its own documents only.
func TestAPQIsPerClient(t *testing.T) {
	t.Parallel()
	base, _ := startServer(t, filepath.Join(t.TempDir(), "f.db"), "-no-seed",
		"-tokens", "tok-a-0123456789=A,tok-b-0123456789=B", "-rate-limit", "100000", "-rate-burst", "100000", "-apq-cache", "1000")
	queryA := `query OfA { sessions(workspaceId: "A") { totalCount } }`
	hashA := sha(queryA)
	_, reg := postAs(t, base, "tok-a-0123456789", map[string]any{"query": queryA, "extensions": persistedExt(hashA)})
	require.Empty(t, reg.Errors)
	_, hit := postAs(t, base, "tok-a-0123456789", map[string]any{"extensions": persistedExt(hashA)})
	require.Empty(t, hit.Errors)
	require.Equal(t, "", wsPersisted(t, base, "tok-a-0123456789", hashA), "A's websocket finds A's document")

	_, probe := postAs(t, base, "tok-b-0123456789", map[string]any{"extensions": persistedExt(hashA)})
	require.Equal(t, "PERSISTED_QUERY_NOT_FOUND", probe.code(), "B learns nothing of A's document")
	_, never := postAs(t, base, "tok-b-0123456789", map[string]any{"extensions": persistedExt(sha("{ never }"))})
	require.Equal(t, never.Errors, probe.Errors, "the same answer as for a hash nobody ran")
	require.Equal(t, "PERSISTED_QUERY_NOT_FOUND", wsPersisted(t, base, "tok-b-0123456789", hashA))
	_, anonymous := postAs(t, base, "", map[string]any{"extensions": persistedExt(hashA)})
	require.Equal(t, "PERSISTED_QUERY_NOT_FOUND", anonymous.code())

	// B registers more documents than the cache holds; A's stays.
	for i := range 1100 {
		q := fmt.Sprintf(`query B%d { sessions(workspaceId: "B") { totalCount } }`, i)
		_, r := postAs(t, base, "tok-b-0123456789", map[string]any{"query": q, "extensions": persistedExt(sha(q))})
		require.Empty(t, r.Errors, "registration %d", i)
	}
	_, after := postAs(t, base, "tok-a-0123456789", map[string]any{"extensions": persistedExt(hashA)})
	require.Empty(t, after.Errors, "B's registrations flushed A's document")
}

// Registering a document is a request like any other: a client without a token is held to
// its address's rate limit (issue 21: 1,100 registrations in 1.2 s flushed the cache).
func TestAPQRegistrationsAreRateLimited(t *testing.T) {
	t.Parallel()
	const rate, burst = 50, 100
	base, _ := startServer(t, filepath.Join(t.TempDir(), "f.db"), "-no-seed",
		"-tokens", "tok-a-0123456789=A", "-rate-limit", fmt.Sprint(rate), "-rate-burst", fmt.Sprint(burst))
	start := time.Now()
	accepted := 0
	for i := range 1100 {
		q := fmt.Sprintf(`query X%d { sessions(workspaceId: "A") { totalCount } }`, i)
		status, r := postAs(t, base, "", map[string]any{"query": q, "extensions": persistedExt(sha(q))})
		switch status {
		case http.StatusTooManyRequests:
			require.Equal(t, "RATE_LIMITED", r.code())
		default:
			require.Equal(t, "UNAUTHENTICATED", r.code(), "registration %d", i)
			accepted++
		}
	}
	elapsed := time.Since(start)
	require.LessOrEqual(t, float64(accepted), burst+rate*elapsed.Seconds()+1,
		"%d of 1,100 registrations went through in %v", accepted, elapsed)
}
