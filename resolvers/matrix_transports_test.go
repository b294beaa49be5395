package resolvers_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/transports"
)

// opKind is what a root field is: the transports that can carry each differ.
type opKind int

const (
	kindQuery opKind = iota
	kindMutation
	kindSubscription
)

// matrixTransport runs one operation as a client of one transport would, with one credential,
// and returns the errors of its first response (a subscription's first event).
type matrixTransport struct {
	name    string
	carries func(opKind) bool
	open    func(t *testing.T, a *testAPI, authorization string) matrixCaller
}

// matrixCaller is one client of a transport, holding a connection across operations where the
// transport has one.
type matrixCaller interface {
	run(t *testing.T, id, query string, vars map[string]any, kind opKind) []gqlError
}

func notSubscriptions(k opKind) bool { return k != kindSubscription }
func queriesOnly(k opKind) bool      { return k == kindQuery }
func everything(opKind) bool         { return true }

// matrixTransports are every way a client reaches a root field: GraphQL over HTTP (POST, GET),
// both websocket protocols, SSE in both modes, and the persisted forms (APQ, trusted documents).
var matrixTransports = []matrixTransport{
	{"POST", notSubscriptions, func(t *testing.T, a *testAPI, auth string) matrixCaller { return httpCaller{a: a, auth: auth} }},
	{"GET", queriesOnly, func(t *testing.T, a *testAPI, auth string) matrixCaller {
		return httpCaller{a: a, auth: auth, get: true}
	}},
	{"graphql-transport-ws", everything, func(t *testing.T, a *testAPI, auth string) matrixCaller {
		return dialMatrixWS(t, a, auth, transports.SubprotocolTransportWS)
	}},
	{"graphql-ws (legacy)", everything, func(t *testing.T, a *testAPI, auth string) matrixCaller {
		return dialMatrixWS(t, a, auth, transports.SubprotocolLegacyWS)
	}},
	{"SSE", everything, func(t *testing.T, a *testAPI, auth string) matrixCaller { return sseCaller{a: a, auth: auth} }},
	{"SSE single connection", everything, func(t *testing.T, a *testAPI, auth string) matrixCaller {
		return openSingleSSE(t, a, auth)
	}},
	{"APQ", notSubscriptions, func(t *testing.T, a *testAPI, auth string) matrixCaller {
		return httpCaller{a: a, auth: auth, apq: true}
	}},
	{"trusted document", notSubscriptions, func(t *testing.T, a *testAPI, auth string) matrixCaller {
		return httpCaller{a: a, auth: auth, trusted: true}
	}},
}

// documentID is a document's id in the trusted manifest: its SHA-256, as the tools write it.
func documentID(query string) string {
	sum := sha256.Sum256([]byte(query))
	return hex.EncodeToString(sum[:])
}

// httpCaller is GraphQL over HTTP: POST or GET, the document itself, by APQ hash, or by id.
type httpCaller struct {
	a                 *testAPI
	auth              string
	get, apq, trusted bool
}

func (c httpCaller) run(t *testing.T, _, query string, vars map[string]any, _ opKind) []gqlError {
	t.Helper()
	if c.apq {
		// The hash alone first; a document the server has not seen yet is sent once, as Apollo's
		// client does, so the operation runs exactly once either way.
		hash := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": documentID(query)}}
		errs := c.post(t, map[string]any{"variables": vars, "extensions": hash})
		if len(errs) == 1 && errs[0].code() == "PERSISTED_QUERY_NOT_FOUND" {
			errs = c.post(t, map[string]any{"query": query, "variables": vars, "extensions": hash})
		}
		return errs
	}
	if c.trusted {
		return c.post(t, map[string]any{"documentId": documentID(query), "variables": vars})
	}
	if c.get {
		v, err := json.Marshal(vars)
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodGet, c.a.url+"/graphql?"+url.Values{"query": {query}, "variables": {string(v)}}.Encode(), nil)
		require.NoError(t, err)
		return c.do(t, req)
	}
	return c.post(t, map[string]any{"query": query, "variables": vars})
}

func (c httpCaller) post(t *testing.T, body map[string]any) []gqlError {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, c.a.url+"/graphql", strings.NewReader(string(b)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	return c.do(t, req)
}

func (c httpCaller) do(t *testing.T, req *http.Request) []gqlError {
	t.Helper()
	req.Header.Set("Accept", "application/json")
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out struct {
		Errors []gqlError `json:"errors"`
	}
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(body, &out), "%d %s", resp.StatusCode, body)
	return out.Errors
}

// wsCaller keeps one websocket (either protocol) open for all its operations.
type wsCaller struct {
	conn   *websocket.Conn
	legacy bool
}

func dialMatrixWS(t *testing.T, a *testAPI, auth, protocol string) matrixCaller {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{protocol}, HandshakeTimeout: 5 * time.Second}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(a.url, "http")+"/graphql", nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	a.root.Cleanup(func() { _ = conn.Close() })
	c := &wsCaller{conn: conn, legacy: protocol == transports.SubprotocolLegacyWS}
	require.NoError(t, conn.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{"authorization": auth}}))
	require.Equal(t, "connection_ack", c.read(t).Type)
	return c
}

func (c *wsCaller) read(t *testing.T) wsMessage {
	t.Helper()
	for {
		require.NoError(t, c.conn.SetReadDeadline(time.Now().Add(wsReadTimeout)))
		var m wsMessage
		require.NoError(t, c.conn.ReadJSON(&m))
		switch m.Type {
		case "ping":
			require.NoError(t, c.conn.WriteJSON(map[string]any{"type": "pong"}))
		case "pong", "ka":
		default:
			return m
		}
	}
}

func (c *wsCaller) run(t *testing.T, id, query string, vars map[string]any, kind opKind) []gqlError {
	t.Helper()
	start, stop := "subscribe", "complete"
	if c.legacy {
		start, stop = "start", "stop"
	}
	require.NoError(t, c.conn.WriteJSON(map[string]any{"id": id, "type": start,
		"payload": map[string]any{"query": query, "variables": vars}}))
	for {
		m := c.read(t)
		if m.ID != id || m.Type == "complete" {
			continue // the end of an earlier operation
		}
		errs := payloadErrors(t, m)
		if kind == kindSubscription && m.Type != "error" {
			require.NoError(t, c.conn.WriteJSON(map[string]any{"id": id, "type": stop}))
		}
		return errs
	}
}

// payloadErrors reads the errors of a websocket result: next/data carry {data, errors}, error
// carries the list (the legacy protocol may send one object).
func payloadErrors(t *testing.T, m wsMessage) []gqlError {
	t.Helper()
	switch m.Type {
	case "next", "data":
		var p struct {
			Errors []gqlError `json:"errors"`
		}
		require.NoError(t, json.Unmarshal(m.Payload, &p))
		return p.Errors
	case "error":
		var list []gqlError
		if json.Unmarshal(m.Payload, &list) == nil {
			return list
		}
		var one gqlError
		require.NoError(t, json.Unmarshal(m.Payload, &one))
		return []gqlError{one}
	}
	t.Fatalf("unexpected %s message: %s", m.Type, m.Payload)
	return nil
}

// sseCaller is graphql-sse's distinct connections mode: one POST stream per operation.
type sseCaller struct {
	a    *testAPI
	auth string
}

func (c sseCaller) run(t *testing.T, _, query string, vars map[string]any, _ opKind) []gqlError {
	t.Helper()
	b, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel() // ends the stream of a subscription after its first event
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.a.url+"/graphql", strings.NewReader(string(b)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	name, data := readSSEEvent(t, bufio.NewScanner(resp.Body))
	require.Equal(t, "next", name, "data: %s", data)
	return resultErrors(t, data)
}

// readSSEEvent reads one event of a text/event-stream.
func readSSEEvent(t *testing.T, sc *bufio.Scanner) (name, data string) {
	t.Helper()
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "" && name != "":
			return name, data
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data:"):
			data = strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		}
	}
	t.Fatalf("the event stream ended: %v", sc.Err())
	return "", ""
}

func resultErrors(t *testing.T, data string) []gqlError {
	t.Helper()
	var p struct {
		Errors []gqlError `json:"errors"`
	}
	require.NoError(t, json.Unmarshal([]byte(data), &p), data)
	return p.Errors
}

// singleSSECaller is graphql-sse's single connection mode: one reserved stream, an operation
// per POST, its events on the stream by operation id.
type singleSSECaller struct {
	a       *testAPI
	auth    string
	token   string
	events  chan [2]string
	scanner *bufio.Scanner
}

func openSingleSSE(t *testing.T, a *testAPI, auth string) matrixCaller {
	t.Helper()
	c := &singleSSECaller{a: a, auth: auth, events: make(chan [2]string, 64)}
	resp := c.request(t, http.MethodPut, nil, "")
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	c.token = string(body)
	ctx, cancel := context.WithCancel(context.Background())
	a.root.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.url+"/graphql?token="+url.QueryEscape(c.token), nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	stream, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, stream.StatusCode)
	a.root.Cleanup(func() { _ = stream.Body.Close() })
	c.scanner = bufio.NewScanner(stream.Body)
	return c
}

func (c *singleSSECaller) request(t *testing.T, method string, body map[string]any, query string) *http.Response {
	t.Helper()
	var reader io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		reader = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, c.a.url+"/graphql"+query, reader)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	if c.token != "" {
		req.Header.Set(transports.TokenHeader, c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return resp
}

func (c *singleSSECaller) run(t *testing.T, id, query string, vars map[string]any, kind opKind) []gqlError {
	t.Helper()
	resp := c.request(t, http.MethodPost, map[string]any{"query": query, "variables": vars,
		"extensions": map[string]any{"operationId": id}}, "")
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode, "%s", body)
	for {
		name, data := readSSEEvent(t, c.scanner)
		var ev struct {
			ID      string          `json:"id"`
			Payload json.RawMessage `json:"payload"`
		}
		require.NoError(t, json.Unmarshal([]byte(data), &ev))
		if ev.ID != id || name != "next" {
			continue
		}
		if kind == kindSubscription {
			stop := c.request(t, http.MethodDelete, nil, "?operationId="+url.QueryEscape(id))
			_ = stop.Body.Close()
		}
		return resultErrors(t, string(ev.Payload))
	}
}

// codes lists the extensions.code of errs, for messages.
func codes(errs []gqlError) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.code() + "/" + fmt.Sprint(e.Extensions["reason"])
	}
	return out
}
