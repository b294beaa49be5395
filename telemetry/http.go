package telemetry

import (
	"bufio"
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
		t.log.Info("http request", append(attrs, rec.operationAttrs()...)...)
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

// statusWriter remembers the status code. It passes Flush (SSE) and Hijack (websockets) through.
type statusWriter struct {
	http.ResponseWriter
	status int
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
