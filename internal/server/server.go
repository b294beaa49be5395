// Package server is the forkgraph server's wiring: it reads the flags and FORKGRAPH_*
// variables, opens the listeners and the store, builds the engine, the GraphQL handler and the
// routes, serves, and shuts down in order. The command at the repository's root calls Run;
// internal/servertest starts the same Run for tests that need the whole server.
package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/internal/heapfloor"
	"github.com/forkgraph/forkgraph/providers/simulated"
	"github.com/forkgraph/forkgraph/resolvers"
	"github.com/forkgraph/forkgraph/store"
	"github.com/forkgraph/forkgraph/telemetry"
	"github.com/forkgraph/forkgraph/transports"
)

// shutdownGrace bounds how long shutdown waits for requests and background fork work.
const shutdownGrace = 10 * time.Second

// Options are what the process gives Run besides its command line: the environment, where
// output goes, the build's stamps, and (for tests) the tracer provider.
type Options struct {
	// Getenv reads a FORKGRAPH_* or OTEL_* variable; nil reads none.
	Getenv func(string) string
	// Stdout receives the "listening on" line and -version; Stderr the logs and -h. Nil: discarded.
	Stdout, Stderr io.Writer
	// Version and Commit are the release and commit -version and forkgraph_build_info report;
	// empty: what the build recorded (telemetry.ReadBuild).
	Version, Commit string
	// NewTracerProvider builds the tracer provider; nil: telemetry.NewTracerProvider, from the
	// OTEL_* variables. Tests give one that keeps the spans in memory.
	NewTracerProvider func(context.Context, func(string) string, telemetry.Build) (trace.TracerProvider, func(context.Context) error, error)
}

// withDefaults fills the nil fields of o.
func (o Options) withDefaults() Options {
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.NewTracerProvider == nil {
		o.NewTracerProvider = telemetry.NewTracerProvider
	}
	return o
}

// IsUsage reports whether err is a command line the flag package refused (Run's error for an
// unknown flag or a value it cannot read): the command prints a hint to -h and exits with 2.
func IsUsage(err error) bool { return errors.As(err, new(usageError)) }

// Run serves until ctx ends, then shuts down gracefully: it stops accepting, closes websockets,
// waits for the engine's background work and closes the store. In-flight fork operations are
// durable; the next start's recovery finishes them. -h prints the flags and returns nil, as
// -version prints the build. Errors name the flag, variable or step that failed.
func Run(ctx context.Context, args []string, opts Options) error {
	opts = opts.withDefaults()
	getenv, stdout, stderr := opts.Getenv, opts.Stdout, opts.Stderr
	cfg, err := parseConfig(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil // -h: the flag package has printed the flags
	}
	if err != nil {
		return err
	}
	if cfg.observe.showVersion {
		fmt.Fprintln(stdout, telemetry.ReadBuild(opts.Version, opts.Commit))
		return nil
	}
	logger, err := telemetry.NewLogger(stderr, cfg.observe.logFormat, cfg.observe.logLevel)
	if err != nil {
		return fmt.Errorf("-log-format, -log-level: %w", err)
	}
	defer heapfloor.Start(uint64(cfg.gcHeapFloor))()
	lns, err := listen(cfg)
	if err != nil {
		return err
	}
	defer lns.close()
	db, err := openStore(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer db.Close()
	obs, err := newObservability(ctx, cfg.observe, opts, logger, db)
	if err != nil {
		return err
	}
	defer obs.close(ctx)
	// Token file watching and key refreshes run while the server does.
	authCtx, stopAuth := context.WithCancel(context.WithoutCancel(ctx))
	defer stopAuth()
	if cfg.authn, err = cfg.auth.build(authCtx, logger, obs.tel.Metrics); err != nil {
		return err
	}

	// Subscribers get events only from the engine's feed, which follows the durable log in cursor
	// order: this process's commits wake it directly, other instances' through PostgreSQL's NOTIFY.
	feedCtx, stopFeed := context.WithCancel(context.WithoutCancel(ctx))
	defer stopFeed()
	obs.forks = obs.tel.Publisher(nil, db)
	engine, err := forkengine.New(forkengine.Config{
		Store: obs.tel.Store(db), Drivers: obs.tel.Drivers(drivers(cfg, obs.webhookClient())), Publisher: obs.forks,
		Events: forkengine.EventsConfig{Log: db, QueueSize: int(cfg.queue), Wake: db.WatchEvents(feedCtx), Poll: cfg.eventPoll},
		Logger: logger, DisableBarrier: !cfg.barrier, ForkingDisabled: !cfg.forking, DetachContext: obs.tel.DetachContext,
		InstanceID: cfg.instanceID, LeaseDuration: cfg.forkLease,
		ExclusiveStore: db.Driver() == store.DriverSQLite, // one process per file: every lease left is a dead one's
	})
	if err != nil {
		return fmt.Errorf("build engine: %w", err)
	}
	if err := engine.StartEvents(feedCtx); err != nil {
		return fmt.Errorf("start the event feed: %w", err)
	}
	obs.tel.Metrics.WatchFeed(engine.EventPosition, db.LogHead)
	obs.tel.Metrics.WatchWork(engine.HeldLeases, db.Retries)
	obs.tel.Metrics.WatchStatements(db.Statements)
	if err := prepare(ctx, cfg, engine, logger); err != nil {
		return err
	}
	obs.ready.MarkRecovered()
	gql := resolvers.NewServer(resolvers.Config{
		Engine: engine, Identify: cfg.authn.Identify, RequestID: access.RequestID, Logger: logger,
		Persisted:  cfg.edge.persisted,
		Extensions: obs.extensions(), Batch: obs.tel.Batch, NarrowReads: db, Unavailable: store.IsUnavailable,
	})
	for _, t := range obs.observeTransports(graphqlTransports(cfg, logger)) {
		gql.AddTransport(t)
	}
	return serve(ctx, cfg, lns, routes(cfg, gql, obs), engine, obs, stdout, logger)
}

// prepare runs start-up recovery and seeds the demo workspace.
func prepare(ctx context.Context, cfg config, engine *forkengine.Engine, logger *slog.Logger) error {
	// Leftover dispatching forks become unknown before the server listens; prepared and
	// provider_accepted ones resume in the background, so a slow provider cannot hold up start-up.
	report, err := engine.StartRecovery(ctx)
	if err != nil {
		return fmt.Errorf("start-up recovery: %w", err)
	}
	logger.Info("recovery started", "instance", engine.InstanceID(), "scanned", report.Scanned, "unknown", report.Unknown,
		"resumed in background", report.Resumed, "errors", len(report.Errors))
	if cfg.auth.open() {
		logger.Warn("no credentials configured: every workspace is open (development mode); set -tokens-file, -tokens or a JWT issuer (docs/security.md)")
	}
	if cfg.noSeed {
		return nil
	}
	if err := seedDemo(ctx, engine); err != nil {
		return fmt.Errorf("seed demo workspace: %w", err)
	}
	return nil
}

// drivers returns the provider drivers by name: simulated always, webhook when configured.
func drivers(cfg config, webhookClient *http.Client) map[string]forkengine.Driver {
	ds := map[string]forkengine.Driver{
		"simulated": simulated.New(simulated.Options{Latency: cfg.simLatency}),
	}
	addWebhook(cfg, ds, webhookClient)
	return ds
}

// serve serves on the listeners until ctx ends, then shuts everything down in order.
func serve(ctx context.Context, cfg config, lns *listeners, h http.Handler, engine *forkengine.Engine, obs *observability, stdout io.Writer, logger *slog.Logger) error {
	stopMetrics := obs.serveMetrics(lns.metrics, logger)
	defer func() { _ = stopMetrics(context.WithoutCancel(ctx)) }()
	if lns.debug != nil {
		stopDebug := serveDebug(lns.debug, logger)
		defer func() { _ = stopDebug(context.WithoutCancel(ctx)) }()
	}
	ln := access.CodeNetHTTPErrors(lns.api) // net/http's own answers get a JSON body and a code too
	// Requests live in baseCtx, which shutdown leaves alone for the grace period so in-flight
	// requests finish (SSE streams end with complete and websockets with 1001 through their
	// transports' own shutdown hooks); it is cancelled only when the grace period runs out.
	baseCtx, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	srv := &http.Server{
		Handler: h, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: access.ServerMaxHeaderBytes,
		BaseContext: func(net.Listener) context.Context { return baseCtx },
	}
	fmt.Fprintf(stdout, "forkgraph listening on http://%s/ (playground at /, GraphQL at /graphql)\n", ln.Addr())

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	// Leases: renew the ones this instance drives, take over the ones whose instance died (and
	// this instance's own forks whose background work failed in passing).
	sweepDone := make(chan struct{})
	sweepCtx, stopSweep := context.WithCancel(ctx)
	defer stopSweep()
	go func() { defer close(sweepDone); engine.MaintainLeases(sweepCtx) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	obs.ready.StartDrain()
	stopSweep()
	<-sweepDone
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	errs := []error{transports.Drain(shutdownCtx, srv, cancelBase)}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		errs = append(errs, err)
	}
	errs = append(errs, engine.Close(shutdownCtx))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	logger.Info("shutdown complete; in-flight forks resume at the next start")
	return nil
}

// openStore opens the database -db names: a postgres:// URL or a SQLite file.
func openStore(ctx context.Context, cfg config, logger *slog.Logger) (*store.DB, error) {
	timeout := cfg.dbTimeout
	if timeout == 0 {
		timeout = -1 // the flag's 0 means none; the store's zero means its default
	}
	db, err := store.Open(ctx, store.Config{DSN: cfg.db, Logger: logger, MaxOpenConns: int(cfg.dbPool), StatementTimeout: timeout})
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", redactDSN(cfg.db), err)
	}
	return db, nil
}

// redactDSN hides the password of a database URL, for messages and logs.
func redactDSN(dsn string) string {
	if !store.IsPostgresURL(dsn) {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres://…"
	}
	return u.Redacted()
}
