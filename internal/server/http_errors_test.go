package server_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/access"
)

// rawRequest writes request on a new TCP connection to the server at base, as is, and reads
// the answer; the connection has ten seconds in all.
func rawRequest(t *testing.T, base, request string) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	// The server may answer (and hang up) before it has read everything: write alongside.
	go func() { _, _ = io.WriteString(conn, request) }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// codedAnswer reads a refusal's GraphQL-shaped JSON body: its code and reason.
func codedAnswer(t *testing.T, resp *http.Response) (code, reason string) {
	t.Helper()
	require.Equal(t, "application/json; charset=utf-8", resp.Header.Get("Content-Type"))
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var body struct {
		Errors []struct {
			Message    string
			Extensions map[string]any
		}
	}
	require.NoError(t, json.Unmarshal(raw, &body), "%s", raw)
	require.Len(t, body.Errors, 1, "%s", raw)
	require.NotEmpty(t, body.Errors[0].Message)
	code, _ = body.Errors[0].Extensions["code"].(string)
	reason, _ = body.Errors[0].Extensions["reason"].(string)
	return code, reason
}

// Issue 21, item 8: every answer carries a code, those net/http writes itself in plain text
// included (431 for oversized headers, 400 for a request it cannot read, 404 and 405 of the
// routes, ...). Each is sent over a raw TCP connection, as a client that is not net/http's
// would, and must come back as a GraphQL-shaped JSON error.
func TestEveryRefusalCarriesACode(t *testing.T) {
	t.Parallel()
	base, _ := startServer(t, filepath.Join(t.TempDir(), "f.db"), "-no-seed")
	host := strings.TrimPrefix(base, "http://")
	get := func(path string, headers ...string) string {
		return "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + strings.Join(headers, "") + "\r\n"
	}
	header := func(name string, size int) string { return name + ": " + strings.Repeat("a", size) + "\r\n" }
	query := `{"query":"{ __typename }"}`
	cases := []struct {
		name, request       string
		status              int
		code, reason, allow string
	}{
		{"headers over the documented limit (the middleware)", get("/graphql", header("X-Big", access.MaxHeaderBytes)),
			http.StatusRequestHeaderFieldsTooLarge, access.CodeHeadersTooLarge, "", ""},
		{"headers over what net/http reads (its own 431)", get("/graphql", header("X-Big", 2*access.ServerMaxHeaderBytes)),
			http.StatusRequestHeaderFieldsTooLarge, access.CodeHeadersTooLarge, "", ""},
		{"headers over the limit on another route", get("/healthz", header("X-Big", access.MaxHeaderBytes)),
			http.StatusRequestHeaderFieldsTooLarge, access.CodeHeadersTooLarge, "", ""},
		{"no Host header", "GET /healthz HTTP/1.1\r\n\r\n", http.StatusBadRequest, access.CodeBadRequest, "missing_host", ""},
		{"a malformed Host header", "GET /healthz HTTP/1.1\r\nHost: a b\r\n\r\n", http.StatusBadRequest, access.CodeBadRequest, "malformed_host", ""},
		{"two Host headers", "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", http.StatusBadRequest, access.CodeBadRequest, "malformed_request", ""},
		{"a header name with a space", get("/healthz", "Bad Name: x\r\n"), http.StatusBadRequest, access.CodeBadRequest, "invalid_header_name", ""},
		{"a header value with a control character", get("/healthz", "X-Bad: a\x01b\r\n"), http.StatusBadRequest, access.CodeBadRequest, "malformed_request", ""},
		{"not HTTP at all", "HELLO\r\n\r\n", http.StatusBadRequest, access.CodeBadRequest, "malformed_request", ""},
		{"a malformed Content-Length", "POST /graphql HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: x\r\n\r\n",
			http.StatusBadRequest, access.CodeBadRequest, "malformed_request", ""},
		{"an unknown transfer coding", "POST /graphql HTTP/1.1\r\nHost: " + host + "\r\nTransfer-Encoding: gzip\r\n\r\n",
			http.StatusNotImplemented, access.CodeNotImplemented, "unsupported_transfer_encoding", ""},
		{"HTTP/2.0 over HTTP/1", "GET /healthz HTTP/2.0\r\nHost: " + host + "\r\n\r\n",
			http.StatusHTTPVersionNotSupported, access.CodeHTTPVersionNotSupported, "", ""},
		{"an Expect the server cannot meet", "POST /graphql HTTP/1.1\r\nHost: " + host + "\r\nExpect: magic\r\n" +
			"Content-Type: application/json\r\nContent-Length: 26\r\n\r\n" + query,
			http.StatusExpectationFailed, access.CodeExpectationFailed, "", ""},
		{"a route that does not exist", get("/nope"), http.StatusNotFound, access.CodeNotFound, "", ""},
		{"a method a route does not serve", "POST /healthz HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: 0\r\n\r\n",
			http.StatusMethodNotAllowed, access.CodeMethodNotAllowed, "", "GET, HEAD"},
		{"a method the playground does not serve", "DELETE / HTTP/1.1\r\nHost: " + host + "\r\n\r\n",
			http.StatusMethodNotAllowed, access.CodeMethodNotAllowed, "", "GET, HEAD"},
		{"a method /graphql does not serve", "PATCH /graphql HTTP/1.1\r\nHost: " + host + "\r\n\r\n",
			http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := rawRequest(t, base, tc.request)
			require.Equal(t, tc.status, resp.StatusCode)
			code, reason := codedAnswer(t, resp)
			require.Equal(t, tc.code, code)
			require.Equal(t, tc.reason, reason)
			if tc.allow != "" {
				require.Equal(t, tc.allow, resp.Header.Get("Allow"))
			}
		})
	}

	// Headers within the limit, and answers that are not refusals, are left alone.
	ok := rawRequest(t, base, get("/healthz", header("X-Fine", access.MaxHeaderBytes-1024)))
	require.Equal(t, http.StatusOK, ok.StatusCode)
	page := rawRequest(t, base, get("/"))
	require.Equal(t, http.StatusOK, page.StatusCode)
	require.Contains(t, page.Header.Get("Content-Type"), "text/html")
	gql := rawRequest(t, base, "POST /graphql HTTP/1.1\r\nHost: "+host+"\r\nContent-Type: application/json\r\n"+
		"Content-Length: 26\r\n\r\n"+query)
	require.Equal(t, http.StatusOK, gql.StatusCode)
	raw, err := io.ReadAll(gql.Body)
	require.NoError(t, err)
	require.JSONEq(t, `{"data":{"__typename":"Query"}}`, string(raw))
}
