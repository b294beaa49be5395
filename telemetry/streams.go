package telemetry

import (
	"context"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/propagation"

	"github.com/forkgraph/forkgraph/transports"
)

// Transports returns the observer to give the websocket and SSE transports: connection counts
// and close codes, queued bytes, dropped results, the errors a websocket refuses with before
// GraphQL runs (in forkgraph_graphql_errors_total), and one log line per websocket connection when
// it closes.
func (t *Telemetry) Transports() *transports.Observer {
	m := t.Metrics
	return &transports.Observer{
		Opened: func(_ *http.Request, protocol string) {
			m.connections.WithLabelValues(protocol).Inc()
			m.connectionsOpened.WithLabelValues(protocol).Inc()
		},
		Closed: func(r *http.Request, protocol string, code int, lifetime time.Duration) {
			m.connections.WithLabelValues(protocol).Dec()
			if protocol == transports.ProtocolSSE {
				return // the HTTP request's own line covers the stream
			}
			m.websocketCloses.WithLabelValues(closeCodeLabel(code)).Inc()
			rec := recordFrom(r.Context())
			var ops int64
			if rec != nil {
				ops = rec.operations.Load()
			}
			t.log.Info("websocket closed", "requestId", requestIDOf(rec), "protocol", protocol,
				"closeCode", code, "operations", ops, "duration", lifetime)
		},
		QueueBytes: func(delta int) { m.queueBytes.Add(float64(delta)) },
		Dropped:    func(protocol string) { m.dropped.WithLabelValues(protocol).Inc() },
		Refused: func(_, code string) {
			if code == "" {
				code = "UNKNOWN"
			}
			m.graphqlErrors.WithLabelValues(t.codes.value(code)).Inc()
		},
	}
}

// WebsocketInit accepts a W3C traceparent (and tracestate) in a connection_init payload, so the
// spans of the connection's operations continue the client's trace, then calls next (nil:
// accept).
func (t *Telemetry) WebsocketInit(next transports.InitFunc) transports.InitFunc {
	return func(ctx context.Context, payload map[string]any) (context.Context, *map[string]any, error) {
		carrier := propagation.MapCarrier{}
		for _, k := range t.propagator.Fields() {
			if v, ok := payload[k].(string); ok {
				carrier[k] = v
			}
		}
		if len(carrier) > 0 {
			ctx = t.propagator.Extract(ctx, carrier)
		}
		if next == nil {
			return ctx, nil, nil
		}
		return next(ctx, payload)
	}
}

// HTTPTransport returns a RoundTripper that sends the current span's W3C traceparent with every
// request through base (nil: http.DefaultTransport), for the webhook provider's client.
func (t *Telemetry) HTTPTransport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return roundTripper{base: base, propagator: t.propagator}
}

type roundTripper struct {
	base       http.RoundTripper
	propagator propagation.TextMapPropagator
}

// RoundTrip sends a copy of req carrying the trace headers; the caller's request is not changed.
func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	rt.propagator.Inject(req.Context(), propagation.HeaderCarrier(out.Header))
	return rt.base.RoundTrip(out)
}
