package telemetry

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/websocket"
	"go.opentelemetry.io/otel/propagation"
)

// HTTP wraps the GraphQL endpoint: it accepts a W3C traceparent header, so the operation's span
// continues the caller's trace, logs one line per request (request id, method, path without the
// query string, status, duration, and the operation's name, type and outcome) and counts
// responses by status. requestID returns the id the edge assigned to r (run HTTP inside it).
func (t *Telemetry) HTTP(next http.Handler, requestID func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &record{requestID: requestID(r), websocket: websocket.IsWebSocketUpgrade(r)}
		ctx := t.propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(withRecord(ctx, rec)))
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		t.Metrics.httpResponses.WithLabelValues(strconv.Itoa(status)).Inc()
		attrs := []any{"requestId", rec.requestID, "method", r.Method, "path", r.URL.Path,
			"status", status, "duration", time.Since(start)}
		if rec.websocket && status == http.StatusSwitchingProtocols {
			attrs = append(attrs, "upgrade", "websocket")
		}
		operation := rec.operationAttrs()
		if operation == nil && sw.refusal != nil {
			if code := t.countRefusal(sw.refusal.Bytes()); code != "" {
				operation = []any{"outcome", code}
			}
		}
		t.log.Info("http request", append(attrs, operation...)...)
	})
}

// DebugLog logs one line at debug level for each request next serves outside the paths HTTP
// already logs (graphqlPath): probes, metrics and the playground, which at info would drown the
// API's lines.
func (t *Telemetry) DebugLog(next http.Handler, graphqlPath string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == graphqlPath || !t.log.Enabled(r.Context(), slog.LevelDebug) {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		t.log.Debug("http request", "method", r.Method, "path", r.URL.Path, "status", status, "duration", time.Since(start))
	})
}

// maxRefusalBody is how much of an error response's body is kept to read its codes: a refusal
// made before GraphQL runs is one short error.
const maxRefusalBody = 8 << 10

// countRefusal counts the errors of body, an error response GraphQL did not produce (the edge's
// and the transports' refusals: a Host not allowed, an unreadable request, ...), in
// forkgraph_graphql_errors_total, as the GraphQL extension counts those of the responses it
// sees, and returns the first one's code ("" when body holds no GraphQL errors).
func (t *Telemetry) countRefusal(body []byte) string {
	var resp struct {
		Errors []struct {
			Extensions struct {
				Code string `json:"code"`
			} `json:"extensions"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &resp) != nil {
		return ""
	}
	first := ""
	for i, e := range resp.Errors {
		code := e.Extensions.Code
		if code == "" {
			code = "UNKNOWN"
		}
		code = t.codes.value(code)
		t.Metrics.graphqlErrors.WithLabelValues(code).Inc()
		if i == 0 {
			first = code
		}
	}
	return first
}

// statusWriter remembers the status code, and the start of the body of an error status (4xx,
// 5xx) for countRefusal. It passes Flush (SSE) and Hijack (websockets) through.
type statusWriter struct {
	http.ResponseWriter
	status  int
	refusal *bytes.Buffer
}

// WriteHeader remembers the first status written.
func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write writes the body; without an explicit status it is 200.
func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.status >= http.StatusBadRequest {
		if w.refusal == nil {
			w.refusal = &bytes.Buffer{}
		}
		if room := maxRefusalBody - w.refusal.Len(); room > 0 {
			w.refusal.Write(b[:min(len(b), room)])
		}
	}
	return w.ResponseWriter.Write(b)
}

// Flush sends buffered data to the client.
func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack hands the connection over (a websocket upgrade): the status is 101.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil && w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	return conn, rw, err
}

// Unwrap lets http.ResponseController reach the server's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
