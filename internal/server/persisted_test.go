package server_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/internal/server"
)

type gqlResponse struct {
	Data   map[string]any
	Errors []struct {
		Message    string
		Extensions map[string]any
	}
}

func (r gqlResponse) code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	code, _ := r.Errors[0].Extensions["code"].(string)
	return code
}

func postJSON(t *testing.T, base string, body map[string]any) (int, gqlResponse) {
	t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	resp, err := http.Post(base+"/graphql", "application/json", bytes.NewReader(raw))
	require.NoError(t, err)
	defer resp.Body.Close()
	var out gqlResponse
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

func getQuery(t *testing.T, base string, q url.Values) gqlResponse {
	t.Helper()
	resp, err := http.Get(base + "/graphql?" + q.Encode())
	require.NoError(t, err)
	defer resp.Body.Close()
	var out gqlResponse
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out
}

func sha(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:]) }

func persistedExt(hash string) map[string]any {
	return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}}
}

// Apollo's automatic persisted queries over POST, GET and the websocket: a bare hash misses
// with PERSISTED_QUERY_NOT_FOUND, the document sent with its hash registers it, and then the
// hash alone runs it everywhere.
func TestAutomaticPersistedQueries(t *testing.T) {
	t.Parallel()
	base, _ := startServer(t, filepath.Join(t.TempDir(), "f.db"))
	query := `query Count { sessions(workspaceId: "demo") { totalCount } }`
	hash := sha(query)

	_, miss := postJSON(t, base, map[string]any{"extensions": persistedExt(hash)})
	require.Equal(t, "PERSISTED_QUERY_NOT_FOUND", miss.code())
	require.Equal(t, "PersistedQueryNotFound", miss.Errors[0].Message, "the message Apollo's link also checks")
	getMiss := getQuery(t, base, url.Values{"extensions": {`{"persistedQuery":{"version":1,"sha256Hash":"` + hash + `"}}`}})
	require.Equal(t, "PERSISTED_QUERY_NOT_FOUND", getMiss.code())

	_, wrong := postJSON(t, base, map[string]any{"query": "{ __typename }", "extensions": persistedExt(hash)})
	require.Equal(t, "PERSISTED_QUERY_INVALID", wrong.code())

	status, reg := postJSON(t, base, map[string]any{"query": query, "extensions": persistedExt(hash)})
	require.Equal(t, http.StatusOK, status)
	require.Empty(t, reg.Errors)

	_, hit := postJSON(t, base, map[string]any{"extensions": persistedExt(hash)})
	require.Empty(t, hit.Errors)
	require.NotNil(t, hit.Data["sessions"])
	getHit := getQuery(t, base, url.Values{"extensions": {`{"persistedQuery":{"version":1,"sha256Hash":"` + hash + `"}}`}})
	require.Empty(t, getHit.Errors)
	require.NotNil(t, getHit.Data["sessions"])

	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+"/graphql", nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	defer conn.Close()
	require.NoError(t, conn.WriteJSON(map[string]any{"type": "connection_init"}))
	require.NoError(t, conn.WriteJSON(map[string]any{"id": "1", "type": "subscribe",
		"payload": map[string]any{"extensions": persistedExt(hash)}}))
	require.NoError(t, conn.WriteJSON(map[string]any{"id": "2", "type": "subscribe",
		"payload": map[string]any{"extensions": persistedExt(sha("{ unknown }"))}}))
	seen := map[string]string{}
	for len(seen) < 2 {
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		var m struct {
			ID, Type string
			Payload  json.RawMessage
		}
		require.NoError(t, conn.ReadJSON(&m))
		switch {
		case m.Type == "next" && m.ID == "1":
			require.Contains(t, string(m.Payload), "totalCount")
			seen["1"] = "next"
		case m.Type == "error" && m.ID == "2":
			require.Contains(t, string(m.Payload), "PERSISTED_QUERY_NOT_FOUND")
			seen["2"] = "error"
		}
	}
}

// A trusted-documents server runs the manifest's documents, by documentId or by hash, and
// refuses anything else with its own code, writing nothing.
func TestTrustedDocuments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	count := `query Count { sessions(workspaceId: "demo") { totalCount } }`
	manifest, err := json.Marshal(map[string]string{sha(count): count})
	require.NoError(t, err)
	path := filepath.Join(dir, "persisted-documents.json")
	require.NoError(t, os.WriteFile(path, manifest, 0o600))
	base, _ := startServer(t, filepath.Join(dir, "f.db"), "-trusted-documents", path)

	_, byID := postJSON(t, base, map[string]any{"documentId": sha(count)})
	require.Empty(t, byID.Errors)
	total := byID.Data["sessions"].(map[string]any)["totalCount"]
	_, byHash := postJSON(t, base, map[string]any{"extensions": persistedExt(sha(count))})
	require.Empty(t, byHash.Errors)
	getByID := getQuery(t, base, url.Values{"documentId": {sha(count)}})
	require.Empty(t, getByID.Errors)

	write := `mutation { reportSession(input: {workspaceId: "demo", id: "intruder", provider: "simulated"}) { id } }`
	_, adhoc := postJSON(t, base, map[string]any{"query": write})
	require.Equal(t, "TRUSTED_DOCUMENT_REQUIRED", adhoc.code())
	_, unknown := postJSON(t, base, map[string]any{"documentId": sha(write)})
	require.Equal(t, "TRUSTED_DOCUMENT_NOT_FOUND", unknown.code())
	_, apqRetry := postJSON(t, base, map[string]any{"query": write, "extensions": persistedExt(sha(write))})
	require.Equal(t, "TRUSTED_DOCUMENT_NOT_FOUND", apqRetry.code(), "registering by APQ is not possible")

	_, after := postJSON(t, base, map[string]any{"documentId": sha(count)})
	require.Equal(t, total, after.Data["sessions"].(map[string]any)["totalCount"], "nothing was written")

	err = server.Run(context.Background(), []string{"-trusted-documents", filepath.Join(dir, "missing.json")}, server.Options{})
	require.ErrorContains(t, err, "-trusted-documents")
}

// APQ remembers a document only once every check has passed: one refused after validation, by
// the complexity limit or the introspection rule, is not cached, so its hash alone stays
// PERSISTED_QUERY_NOT_FOUND rather than naming a document that can never run.
func TestAPQForgetsDocumentsRefusedAfterValidation(t *testing.T) {
	t.Parallel()
	base, _ := startServer(t, filepath.Join(t.TempDir(), "f.db"))
	for name, doc := range map[string]string{
		"complexity":             `query Big { sessions(workspaceId: "demo", first: 200) { edges { node { turns(first: 200) { edges { node { messages { id } } } } } } } }`,
		"introspection re-entry": `{ __schema { types { fields { type { fields { name } } } } } }`,
	} {
		_, first := postJSON(t, base, map[string]any{"query": doc, "extensions": persistedExt(sha(doc))})
		require.Equal(t, "COMPLEXITY_LIMIT_EXCEEDED", first.code(), name)
		_, bare := postJSON(t, base, map[string]any{"extensions": persistedExt(sha(doc))})
		require.Equal(t, "PERSISTED_QUERY_NOT_FOUND", bare.code(), "%s: a refused document was cached", name)
	}
}

// Over SSE, a request refused before execution (here an APQ miss) arrives as a `next` with the
// errors and no data entry (GraphQL spec §7.1.2), as GraphQL over HTTP answers it.
func TestSSEPersistedQueryMissHasNoDataEntry(t *testing.T) {
	t.Parallel()
	base, _ := startServer(t, filepath.Join(t.TempDir(), "f.db"))
	req, err := http.NewRequest(http.MethodPost, base+"/graphql",
		strings.NewReader(`{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"`+sha("{ x }")+`"}}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	scanner := bufio.NewScanner(resp.Body)
	for scanner.Scan() {
		if data, ok := strings.CutPrefix(scanner.Text(), "data: "); ok {
			var payload map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(data), &payload), data)
			require.Contains(t, string(payload["errors"]), "PERSISTED_QUERY_NOT_FOUND")
			_, hasData := payload["data"]
			require.False(t, hasData, "a refused request has a data entry: %s", data)
			return
		}
	}
	t.Fatal("no next event")
}
