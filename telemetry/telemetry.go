package telemetry

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// instrumentation names the tracer, as OpenTelemetry asks.
const instrumentation = "github.com/forkgraph/forkgraph/telemetry"

// Options configures New.
type Options struct {
	Build Build
	// TracerProvider makes the spans (default: a no-op provider, so tracing costs nothing).
	TracerProvider trace.TracerProvider
	// Logger receives the request, websocket and operation log lines (default slog.Default()).
	Logger *slog.Logger
	// Subject names the caller of an operation from its context (access.SubjectOf): operation
	// spans carry it as enduser.id and log lines as subject; never the credential itself. nil:
	// none.
	Subject func(ctx context.Context) string
}

// Telemetry instruments one server: its methods return the extension, middleware, observer and
// decorators to wire in. It is safe for concurrent use.
type Telemetry struct {
	// Metrics are the collectors; MetricsHandler serves them.
	Metrics *Metrics

	build      Build
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
	log        *slog.Logger
	operations *labelSet
	codes      *labelSet
	subject    func(ctx context.Context) string
}

// New builds the collectors and the tracer.
func New(opts Options) *Telemetry {
	if opts.TracerProvider == nil {
		opts.TracerProvider = noop.NewTracerProvider()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Subject == nil {
		opts.Subject = func(context.Context) string { return "" }
	}
	return &Telemetry{
		Metrics:    NewMetrics(opts.Build),
		build:      opts.Build,
		tracer:     opts.TracerProvider.Tracer(instrumentation, trace.WithInstrumentationVersion(opts.Build.Version)),
		propagator: propagation.TraceContext{},
		log:        opts.Logger,
		operations: newLabelSet(maxOperationNames),
		codes:      newLabelSet(maxErrorCodes),
		subject:    opts.Subject,
	}
}

// MetricsHandler serves the registry in the Prometheus exposition format.
func (t *Telemetry) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(t.Metrics.Registry, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(t.log.Handler(), slog.LevelError)})
}
