package server_test

import (
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const deferredDocument = `query Deferred { session(workspaceId: "demo", id: "lisbon-trip") { title ... @defer { latestTurn { sequence } } } }`

// deferredRequest sends a GraphQL request (a JSON body, or a GET query string when body is
// nil) with Accept and returns the status and, for a multipart answer, its payloads.
func deferredRequest(t *testing.T, method, target, accept string, body map[string]any) (int, []map[string]any) {
	t.Helper()
	var reader io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		reader = strings.NewReader(string(raw))
	}
	req, err := http.NewRequest(method, target, reader)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	mediaType, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	require.NoError(t, err)
	if mediaType != "multipart/mixed" {
		return resp.StatusCode, nil
	}
	var payloads []map[string]any
	parts := multipart.NewReader(resp.Body, params["boundary"])
	for {
		part, err := parts.NextPart()
		if err == io.EOF {
			return resp.StatusCode, payloads
		}
		require.NoError(t, err)
		var p map[string]any
		require.NoError(t, json.NewDecoder(part).Decode(&p))
		payloads = append(payloads, p)
	}
}

// requireLatestSequence checks that the deferred latestTurn of lisbon-trip arrived in the last
// payload.
func requireLatestSequence(t *testing.T, payloads []map[string]any) {
	t.Helper()
	require.Len(t, payloads, 2)
	require.Equal(t, true, payloads[0]["hasNext"])
	require.Equal(t, false, payloads[1]["hasNext"])
	item := payloads[1]["incremental"].([]any)[0].(map[string]any)
	require.Equal(t, map[string]any{"latestTurn": map[string]any{"sequence": float64(3)}}, item["data"])
}

const multipartAccept = "multipart/mixed;deferSpec=20220824,application/json"

// A persisted document with @defer is delivered incrementally like one sent in full: by APQ
// hash over POST and GET, and by documentId from a trusted-documents manifest.
func TestPersistedDocumentsWithDefer(t *testing.T) {
	t.Parallel()
	base, _ := startServer(t, filepath.Join(t.TempDir(), "f.db"))
	hash := sha(deferredDocument)
	status, payloads := deferredRequest(t, http.MethodPost, base+"/graphql", multipartAccept,
		map[string]any{"query": deferredDocument, "extensions": persistedExt(hash)})
	require.Equal(t, http.StatusOK, status)
	requireLatestSequence(t, payloads)

	status, payloads = deferredRequest(t, http.MethodPost, base+"/graphql", multipartAccept, map[string]any{"extensions": persistedExt(hash)})
	require.Equal(t, http.StatusOK, status)
	requireLatestSequence(t, payloads)
	ext := `{"persistedQuery":{"version":1,"sha256Hash":"` + hash + `"}}`
	status, payloads = deferredRequest(t, http.MethodGet, base+"/graphql?"+url.Values{"extensions": {ext}}.Encode(), multipartAccept, nil)
	require.Equal(t, http.StatusOK, status)
	requireLatestSequence(t, payloads)
	status, _ = deferredRequest(t, http.MethodPost, base+"/graphql", "application/json", map[string]any{"extensions": persistedExt(hash)})
	require.Equal(t, http.StatusNotAcceptable, status)

	dir := t.TempDir()
	manifest, err := json.Marshal(map[string]string{hash: deferredDocument})
	require.NoError(t, err)
	path := filepath.Join(dir, "persisted-documents.json")
	require.NoError(t, os.WriteFile(path, manifest, 0o600))
	trusted, _ := startServer(t, filepath.Join(dir, "f.db"), "-trusted-documents", path)
	status, payloads = deferredRequest(t, http.MethodPost, trusted+"/graphql", multipartAccept, map[string]any{"documentId": hash})
	require.Equal(t, http.StatusOK, status)
	requireLatestSequence(t, payloads)
}
