package telemetry

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// TracingEnabled reports whether the OTEL_* variables ask for traces: an OTLP endpoint is set
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER
// is otlp, and neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none turns them off.
func TracingEnabled(getenv func(string) string) bool {
	env := func(k string) string { return strings.TrimSpace(getenv(k)) }
	if strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	switch strings.ToLower(env("OTEL_TRACES_EXPORTER")) {
	case "none":
		return false
	case "otlp":
		return true
	}
	return env("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// NewTracerProvider returns the tracer provider the OTEL_* variables describe and the function
// that flushes and stops it. When tracing is not enabled (TracingEnabled) it is a no-op provider
// and costs nothing. Otherwise spans are batched to an OTLP/HTTP exporter, which reads its
// endpoint, headers, timeout and TLS settings from the standard variables itself, as the SDK
// reads OTEL_TRACES_SAMPLER and the resource reads OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES (service.name defaults to forkgraph). It fails for
// OTEL_EXPORTER_OTLP_PROTOCOL grpc, which this build does not include.
func NewTracerProvider(ctx context.Context, getenv func(string) string, build Build) (trace.TracerProvider, func(context.Context) error, error) {
	if !TracingEnabled(getenv) {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, nil
	}
	protocol := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	if protocol == "" {
		protocol = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	if protocol != "" && protocol != "http/protobuf" {
		return nil, nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: only http/protobuf is supported", protocol)
	}
	exporter, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "forkgraph"),
			attribute.String("service.version", build.Version)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, nil, fmt.Errorf("trace resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}
