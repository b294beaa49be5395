package telemetry

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

func TestTracingEnabled(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"OffWhenUnset", nil, false},
		{"OnWithAnEndpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{"OnWithATracesEndpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, true},
		{"OnWithTheOTLPExporter", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{"OffWithExporterNone", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
		{"OffWhenTheSDKIsDisabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TracingEnabled(func(k string) string { return tt.env[k] }); got != tt.want {
				t.Fatalf("TracingEnabled = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNewTracerProvider(t *testing.T) {
	ctx := context.Background()
	tp, shutdown, err := NewTracerProvider(ctx, func(string) string { return "" }, Build{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tp.(noop.TracerProvider); !ok {
		t.Fatalf("unset OTEL_*: got %T, want the no-op provider", tp)
	}
	if err := shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	_, _, err = NewTracerProvider(ctx, func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}[k]
	}, Build{})
	if err == nil || !strings.Contains(err.Error(), "http/protobuf") {
		t.Fatalf("grpc: err = %v, want a clear refusal", err)
	}

	// The exporter reads the process environment itself.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	tp, shutdown, err = NewTracerProvider(ctx, func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}[k]
	}, Build{Version: "v0"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tp.(*sdktrace.TracerProvider); !ok {
		t.Fatalf("with an endpoint: got %T, want the SDK's provider", tp)
	}
	_ = shutdown(ctx) // nothing was recorded, so nothing is sent to the closed port
}

func TestNewLogger(t *testing.T) {
	var out strings.Builder
	logger, err := NewLogger(&out, "text", "warn")
	if err != nil {
		t.Fatal(err)
	}
	logger.Info("hidden")
	logger.Warn("shown")
	if strings.Contains(out.String(), "hidden") || !strings.Contains(out.String(), "shown") {
		t.Fatalf("level warn: %q", out.String())
	}
	if _, err := NewLogger(&out, "xml", "info"); err == nil {
		t.Fatal("format xml accepted")
	}
	if _, err := NewLogger(&out, "json", "loud"); err == nil {
		t.Fatal("level loud accepted")
	}
}
