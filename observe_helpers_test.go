package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a log sink the server writes to from many goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// apiClient runs GraphQL over HTTP with a bearer token and optional extra headers.
type apiClient struct {
	t      *testing.T
	base   string
	token  string
	header http.Header
}

// do posts one operation and returns its data and error codes.
func (c apiClient) do(query string, vars map[string]any, out any) []string {
	c.t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(c.t, err)
	req, err := http.NewRequest(http.MethodPost, c.base+"/graphql", bytes.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range c.header {
		req.Header[k] = vs
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	var envelope struct {
		Data   json.RawMessage
		Errors []struct{ Extensions struct{ Code string } }
	}
	require.NoError(c.t, json.NewDecoder(resp.Body).Decode(&envelope))
	var codes []string
	for _, e := range envelope.Errors {
		codes = append(codes, e.Extensions.Code)
	}
	if out != nil && len(codes) == 0 {
		require.NoError(c.t, json.Unmarshal(envelope.Data, out))
	}
	return codes
}

// must runs an operation that must succeed.
func (c apiClient) must(query string, vars map[string]any, out any) {
	c.t.Helper()
	require.Empty(c.t, c.do(query, vars, out), "query: %s", query)
}

// followFork subscribes to one fork operation over a websocket (the token and the init payload's
// extra fields in connection_init), returns the phases received until the stream completes, and
// closes the connection normally (1000).
func (c apiClient) followFork(ws, id string, initExtra map[string]any) []string {
	c.t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(c.base, "http")+"/graphql", nil)
	require.NoError(c.t, err)
	_ = resp.Body.Close()
	defer conn.Close()
	payload := map[string]any{}
	if c.token != "" {
		payload["authorization"] = "Bearer " + c.token
	}
	for k, v := range initExtra {
		payload[k] = v
	}
	type message struct {
		ID, Type string
		Payload  json.RawMessage
	}
	read := func() message {
		require.NoError(c.t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
		var m message
		require.NoError(c.t, conn.ReadJSON(&m))
		return m
	}
	require.NoError(c.t, conn.WriteJSON(map[string]any{"type": "connection_init", "payload": payload}))
	require.Equal(c.t, "connection_ack", read().Type)
	require.NoError(c.t, conn.WriteJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
		"query":     `subscription Follow($ws: ID!, $id: ID!) { forkOperationUpdated(workspaceId: $ws, id: $id) { phase } }`,
		"variables": map[string]any{"ws": ws, "id": id},
	}}))
	var phases []string
	for {
		m := read()
		switch m.Type {
		case "ping":
			require.NoError(c.t, conn.WriteJSON(map[string]any{"type": "pong"}))
		case "next":
			var p struct {
				Data struct{ ForkOperationUpdated struct{ Phase string } }
			}
			require.NoError(c.t, json.Unmarshal(m.Payload, &p))
			phases = append(phases, p.Data.ForkOperationUpdated.Phase)
		case "complete":
			_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "done"),
				time.Now().Add(time.Second))
			return phases
		default:
			c.t.Fatalf("unexpected %s: %s", m.Type, m.Payload)
		}
	}
}

// scrape reads /metrics and returns the raw exposition and its parsed families.
func scrape(t *testing.T, base string) ([]byte, map[string]*dto.MetricFamily) {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	require.NoError(t, err)
	return raw, families
}

// sample is the value of the series of family name whose labels include want: a counter's or
// gauge's value, a histogram's sample count. A missing series is 0.
func sample(families map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := families[name]
	if f == nil {
		return 0
	}
	var total float64
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			if labels[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		case m.Histogram != nil:
			total += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return total
}

// histogramSum is the sum of the histogram series of name whose labels include want.
func histogramSum(families map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := families[name]
	if f == nil {
		return 0
	}
	var total float64
	for _, m := range f.GetMetric() {
		ok := true
		for _, l := range m.GetLabel() {
			if v, set := want[l.GetName()]; set && v != l.GetValue() {
				ok = false
			}
		}
		if ok && m.Histogram != nil {
			total += m.GetHistogram().GetSampleSum()
		}
	}
	return total
}

// labels is shorthand for a label set.
func labels(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// followSSE subscribes to one fork operation over server-sent events and returns how many `next`
// events arrived before `complete`.
func (c apiClient) followSSE(ws, id string) int {
	c.t.Helper()
	body, err := json.Marshal(map[string]any{
		"query":     `subscription FollowSSE($ws: ID!, $id: ID!) { forkOperationUpdated(workspaceId: $ws, id: $id) { phase } }`,
		"variables": map[string]any{"ws": ws, "id": id},
	})
	require.NoError(c.t, err)
	req, err := http.NewRequest(http.MethodPost, c.base+"/graphql", bytes.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	require.Equal(c.t, http.StatusOK, resp.StatusCode)
	stream, err := io.ReadAll(resp.Body) // the server ends the stream after complete
	require.NoError(c.t, err)
	require.Contains(c.t, string(stream), "event: complete")
	return strings.Count(string(stream), "event: next")
}
