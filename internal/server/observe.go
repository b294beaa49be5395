package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/resolvers"
	"github.com/forkgraph/forkgraph/store"
	"github.com/forkgraph/forkgraph/telemetry"
	"github.com/forkgraph/forkgraph/transports"
)

// observeConfig is what the operator says about logs, metrics and the binary.
type observeConfig struct {
	logFormat   string
	logLevel    string
	metricsAddr string
	showVersion bool
}

// observeFlags defines the flags of observeConfig. -version has no variable: it is an action,
// not configuration, and a variable left set would stop every start.
func observeFlags(fs *flag.FlagSet, env *envReader, cfg *observeConfig) {
	fs.StringVar(&cfg.logFormat, "log-format", env.str("FORKGRAPH_LOG_FORMAT", "text"), "log format: text or json (FORKGRAPH_LOG_FORMAT)")
	fs.StringVar(&cfg.logLevel, "log-level", env.str("FORKGRAPH_LOG_LEVEL", "info"),
		"least severe level logged: debug, info, warn or error (FORKGRAPH_LOG_LEVEL)")
	fs.StringVar(&cfg.metricsAddr, "metrics-addr", env.str("FORKGRAPH_METRICS_ADDR", ""),
		"serve /metrics on this address instead of the API listener; empty: on the API listener (FORKGRAPH_METRICS_ADDR)")
	fs.BoolVar(&cfg.showVersion, "version", false, "print the version, commit and Go version, then exit")
}

// observability is the server's telemetry, readiness and the tracer provider's shutdown.
type observability struct {
	cfg      observeConfig
	build    telemetry.Build
	tel      *telemetry.Telemetry
	ready    *telemetry.Readiness
	forks    *telemetry.ForkPublisher
	shutdown func(context.Context) error
}

// newObservability sets up tracing (opts.NewTracerProvider, from the OTEL_* variables of
// opts.Getenv) and the metrics of the build opts names, and watches db's connection pool and
// readiness. opts has its defaults (Options.withDefaults).
func newObservability(ctx context.Context, cfg observeConfig, opts Options, logger *slog.Logger, db *store.DB) (*observability, error) {
	build := telemetry.ReadBuild(opts.Version, opts.Commit)
	tp, shutdown, err := opts.NewTracerProvider(ctx, opts.Getenv, build)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	tel := telemetry.New(telemetry.Options{Build: build, TracerProvider: tp, Logger: logger, Subject: access.SubjectOf})
	tel.SeedErrorCodes(errorCodes)
	tel.SeedLoaders(resolvers.LoaderNames)
	tel.Metrics.WatchPool(db.PoolStats)
	if _, ok := db.CheckpointStats(); ok {
		tel.Metrics.WatchSQLiteCheckpoints(func() telemetry.SQLiteCheckpoints {
			st, _ := db.CheckpointStats()
			return telemetry.SQLiteCheckpoints{Runs: st.Runs, Restarts: st.Restarts, Failures: st.Failures,
				Busy: st.Busy, WriteLockHeld: st.WriteLockHeld, LogFrames: st.LastFrames}
		})
	}
	if db.Driver() == store.DriverSQLite {
		tel.Metrics.WatchSQLiteWrites(func() telemetry.SQLiteWrites {
			st := db.WriteGroupStats()
			return telemetry.SQLiteWrites{Transactions: st.Transactions, Groups: st.Groups, Grouped: st.Grouped, Reruns: st.Reruns}
		})
	}
	ready := telemetry.NewReadiness(func(ctx context.Context) error {
		_, err := db.CountSessions(ctx, "", forkengine.SessionFilter{})
		return err
	})
	return &observability{cfg: cfg, build: build, tel: tel, ready: ready, shutdown: shutdown}, nil
}

// webhookClient is the webhook driver's client: it sends each call's traceparent.
func (o *observability) webhookClient() *http.Client {
	return &http.Client{Transport: o.tel.HTTPTransport(nil)}
}

// extensions are the gqlgen extensions installed outermost.
func (o *observability) extensions() []graphql.HandlerExtension {
	return []graphql.HandlerExtension{o.tel.GraphQL()}
}

// observeTransports gives the streaming transports the observer and the websocket's InitFunc
// the traceparent of connection_init.
func (o *observability) observeTransports(ts []graphql.Transport) []graphql.Transport {
	out := make([]graphql.Transport, 0, len(ts))
	for _, t := range ts {
		switch t := t.(type) {
		case transports.Websocket:
			t.Observer = o.tel.Transports()
			t.InitFunc = o.tel.WebsocketInit(t.InitFunc)
			out = append(out, t)
		case transports.SSE:
			t.Observer = o.tel.Transports()
			out = append(out, t)
		default:
			out = append(out, t)
		}
	}
	return out
}

// graphqlHandler wraps /graphql with the request log, metrics and traceparent middleware.
func (o *observability) graphqlHandler(next http.Handler) http.Handler {
	return o.tel.HTTP(next, func(r *http.Request) string { return access.RequestID(r.Context()) })
}

// register adds /readyz and, without -metrics-addr, /metrics to the API's mux.
func (o *observability) register(mux *http.ServeMux) {
	mux.Handle("GET /readyz", o.ready.Handler())
	if o.cfg.metricsAddr == "" {
		mux.Handle("GET /metrics", o.tel.MetricsHandler())
	}
}

// health is the /healthz body: the status and the build.
func (o *observability) health(status string) map[string]string {
	return map[string]string{"status": status, "version": o.build.Version, "commit": o.build.Commit, "go": o.build.GoVersion}
}

// serveMetrics serves /metrics on ln, the -metrics-addr listener (nil without one), and returns
// the function that stops it.
func (o *observability) serveMetrics(ln net.Listener, logger *slog.Logger) func(context.Context) error {
	if ln == nil {
		return func(context.Context) error { return nil }
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", o.tel.MetricsHandler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics listener stopped", "err", err)
		}
	}()
	logger.Info("metrics listener", "url", "http://"+ln.Addr().String()+"/metrics")
	return srv.Shutdown
}

// close flushes and stops the tracer provider and waits for pending fork-duration reads.
func (o *observability) close(ctx context.Context) {
	if o.forks != nil {
		o.forks.Wait()
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = o.shutdown(ctx)
}
