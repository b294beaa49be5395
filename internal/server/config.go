package server

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/internal/heapfloor"
	"github.com/forkgraph/forkgraph/store"
)

// defaultSubscriberQueue is how many events a subscription may have waiting. A workspace sees a
// few events a second and a fork cycle about ten at once, so 128 is a long way behind; a slot is
// a pointer, so 10,000 subscribers pay 1 KiB each (the engine's default, 256, costs twice that).
const defaultSubscriberQueue = 128

// config is everything the server can be told. Every flag has an environment variable; a flag
// given on the command line wins over the variable, the variable over the default.
type config struct {
	addr           string
	db             string // a SQLite file path or a postgres:// URL
	dbPool         int64
	dbTimeout      time.Duration
	eventPoll      time.Duration
	instanceID     string
	forkLease      time.Duration
	simLatency     time.Duration
	barrier        bool
	forking        bool
	webhookURL     string
	webhookTimeout time.Duration
	auth           authConfig
	// authn is the authenticator run builds from auth (it reads the tokens file); nil until then.
	authn       *access.Authenticator
	maxBody     int64
	rateLimit   float64
	rateBurst   int64
	noSeed      bool
	debugAddr   string
	queue       int64
	gcHeapFloor int64
	edge        edgeConfig
	observe     observeConfig
}

// parseConfig reads flags and FORKGRAPH_* variables. Errors name the bad flag or variable; a
// command line the flag package refuses is a usageError. -h prints the flags to stderr and
// returns flag.ErrHelp.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("forkgraph", flag.ContinueOnError)
	env := envReader{getenv: getenv}
	var cfg config
	fs.StringVar(&cfg.addr, "addr", env.str("FORKGRAPH_ADDR", "127.0.0.1:8080"), "listen address (FORKGRAPH_ADDR)")
	fs.StringVar(&cfg.db, "db", env.str("FORKGRAPH_DB", "./forkgraph.db"),
		"SQLite database file, or a postgres:// URL to share one database between instances (FORKGRAPH_DB)")
	fs.Int64Var(&cfg.dbPool, "db-pool", env.int64("FORKGRAPH_DB_POOL", store.DefaultPostgresPool),
		"PostgreSQL: most connections this instance opens (FORKGRAPH_DB_POOL)")
	fs.DurationVar(&cfg.dbTimeout, "db-statement-timeout", env.duration("FORKGRAPH_DB_STATEMENT_TIMEOUT", store.DefaultStatementTimeout),
		"PostgreSQL: longest one statement may run; 0 for none (FORKGRAPH_DB_STATEMENT_TIMEOUT)")
	fs.DurationVar(&cfg.simLatency, "sim-latency", env.duration("FORKGRAPH_SIM_LATENCY", 400*time.Millisecond),
		"how long a simulated fork takes, so its phases are visible (FORKGRAPH_SIM_LATENCY)")
	fs.BoolVar(&cfg.forking, "forking", env.boolean("FORKGRAPH_FORKING", true),
		"start new forks; false refuses every new forkSession (FORK_UNSUPPORTED forking_disabled) while forks already started finish (FORKGRAPH_FORKING)")
	fs.BoolVar(&cfg.barrier, "barrier", env.boolean("FORKGRAPH_BARRIER", true),
		"return the unacknowledged fork instead of forking a boundary again (FORKGRAPH_BARRIER)")
	fs.StringVar(&cfg.webhookURL, "webhook-url", env.str("FORKGRAPH_WEBHOOK_URL", ""),
		"base `URL` of a webhook provider adapter; registers the provider \"webhook\" (FORKGRAPH_WEBHOOK_URL)")
	fs.DurationVar(&cfg.webhookTimeout, "webhook-timeout", env.duration("FORKGRAPH_WEBHOOK_TIMEOUT", 10*time.Second),
		"timeout of one webhook call (FORKGRAPH_WEBHOOK_TIMEOUT)")
	fs.Int64Var(&cfg.maxBody, "max-body", env.int64("FORKGRAPH_MAX_BODY", 1<<20), "largest request body in bytes (FORKGRAPH_MAX_BODY)")
	fs.StringVar(&cfg.instanceID, "instance-id", env.str("FORKGRAPH_INSTANCE_ID", ""),
		"this instance's name as the owner of fork leases; empty: generated, unique per process (FORKGRAPH_INSTANCE_ID)")
	fs.DurationVar(&cfg.forkLease, "fork-lease", env.duration("FORKGRAPH_FORK_LEASE", forkengine.DefaultLeaseDuration),
		"how long an instance holds a fork it drives without renewing; after it dies, others wait this long to take over (FORKGRAPH_FORK_LEASE)")
	fs.DurationVar(&cfg.eventPoll, "event-poll", env.duration("FORKGRAPH_EVENT_POLL", forkengine.DefaultFeedPoll),
		"how often the event log is read when no notification came (FORKGRAPH_EVENT_POLL)")
	fs.Float64Var(&cfg.rateLimit, "rate-limit", env.float("FORKGRAPH_RATE_LIMIT", 50),
		"with tokens: requests per second per token (per address without a valid one); 0 disables (FORKGRAPH_RATE_LIMIT)")
	fs.Int64Var(&cfg.rateBurst, "rate-burst", env.int64("FORKGRAPH_RATE_BURST", 100), "requests a client may send at once (FORKGRAPH_RATE_BURST)")
	fs.BoolVar(&cfg.noSeed, "no-seed", env.boolean("FORKGRAPH_NO_SEED", false), "do not create the demo workspace (FORKGRAPH_NO_SEED)")
	fs.Int64Var(&cfg.queue, "subscriber-queue", env.int64("FORKGRAPH_SUBSCRIBER_QUEUE", defaultSubscriberQueue),
		"events a subscription may have waiting before it ends with RESUME_REQUIRED (FORKGRAPH_SUBSCRIBER_QUEUE)")
	fs.StringVar(&cfg.debugAddr, "debug-addr", env.str("FORKGRAPH_DEBUG_ADDR", ""),
		"loopback address for net/http/pprof profiles and memory statistics; empty: off (FORKGRAPH_DEBUG_ADDR)")
	fs.Int64Var(&cfg.gcHeapFloor, "gc-heap-floor", env.int64("FORKGRAPH_GC_HEAP_FLOOR", heapfloor.Default),
		"bytes the heap may grow between garbage collections however little is live; 0: GOGC alone decides (FORKGRAPH_GC_HEAP_FLOOR)")
	cfg.auth.register(fs, &env)
	cfg.edge.register(fs, &env)
	observeFlags(fs, &env, &cfg.observe)
	if err := parseFlags(fs, args, stderr); err != nil {
		return config{}, err
	}
	if env.err != nil {
		return config{}, env.err
	}
	if err := store.CheckDSN(cfg.db); err != nil {
		return config{}, fmt.Errorf("-db (FORKGRAPH_DB): %w", err)
	}
	if err := cfg.auth.resolve(); err != nil {
		return config{}, err
	}
	if cfg.queue <= 0 || cfg.queue > 1<<20 {
		return config{}, fmt.Errorf("-subscriber-queue must be between 1 and %d, got %d", 1<<20, cfg.queue)
	}
	if cfg.simLatency < 0 || cfg.webhookTimeout <= 0 {
		return config{}, fmt.Errorf("-sim-latency must not be negative and -webhook-timeout must be positive (got %s, %s)",
			cfg.simLatency, cfg.webhookTimeout)
	}
	if cfg.forkLease < 100*time.Millisecond {
		return config{}, fmt.Errorf("-fork-lease must be at least 100ms, got %s", cfg.forkLease)
	}
	if cfg.eventPoll <= 0 {
		return config{}, fmt.Errorf("-event-poll must be positive, got %s", cfg.eventPoll)
	}
	if cfg.dbPool <= 0 || cfg.dbPool > 10000 || cfg.dbTimeout < 0 {
		return config{}, fmt.Errorf("-db-pool must be between 1 and 10000 and -db-statement-timeout must not be negative (got %d, %s)",
			cfg.dbPool, cfg.dbTimeout)
	}
	if cfg.gcHeapFloor < 0 {
		return config{}, fmt.Errorf("-gc-heap-floor must not be negative, got %d", cfg.gcHeapFloor)
	}
	if cfg.maxBody <= 0 {
		return config{}, fmt.Errorf("-max-body must be positive, got %d", cfg.maxBody)
	}
	for _, l := range []struct{ flag, variable, addr, example string }{
		{"-addr", "FORKGRAPH_ADDR", cfg.addr, "127.0.0.1:8080"},
		{"-metrics-addr", "FORKGRAPH_METRICS_ADDR", cfg.observe.metricsAddr, "127.0.0.1:9464"},
		{"-debug-addr", "FORKGRAPH_DEBUG_ADDR", cfg.debugAddr, "127.0.0.1:6060"},
	} {
		if l.addr == "" && l.flag != "-addr" {
			continue // off
		}
		if err := checkListenAddr(l.flag, l.variable, l.addr, l.example); err != nil {
			return config{}, err
		}
	}
	if err := cfg.edge.resolve(cfg); err != nil {
		return config{}, err
	}
	return cfg, nil
}

// envReader reads typed defaults from the environment, remembering the first malformed value.
type envReader struct {
	getenv func(string) string
	err    error
}

func (e *envReader) str(name, def string) string {
	if v := strings.TrimSpace(e.getenv(name)); v != "" {
		return v
	}
	return def
}

func (e *envReader) duration(name string, def time.Duration) time.Duration {
	return parseEnv(e, name, def, time.ParseDuration)
}

func (e *envReader) boolean(name string, def bool) bool {
	return parseEnv(e, name, def, func(s string) (bool, error) {
		switch strings.ToLower(s) {
		case "on", "yes":
			return true, nil
		case "off", "no":
			return false, nil
		}
		return strconv.ParseBool(s)
	})
}

func (e *envReader) float(name string, def float64) float64 {
	return parseEnv(e, name, def, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
}

func (e *envReader) int64(name string, def int64) int64 {
	return parseEnv(e, name, def, func(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) })
}

func parseEnv[T any](e *envReader, name string, def T, parse func(string) (T, error)) T {
	raw := strings.TrimSpace(e.getenv(name))
	if raw == "" {
		return def
	}
	v, err := parse(raw)
	if err != nil && e.err == nil {
		e.err = fmt.Errorf("%s=%q: %w", name, raw, err)
	}
	if err != nil {
		return def
	}
	return v
}

// usageError is a command line the flag package refused: main prints it with a hint to -h
// instead of the whole list of flags.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// parseFlags parses args without printing anything but -h's list of flags. The flag package
// prints the whole usage after any mistake, burying the one line that matters, and says only
// "parse error" for a value it cannot read; parsing with the output discarded and each value
// explained (explainedValue) keeps the error to one line that names what the flag wants.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.VisitAll(func(f *flag.Flag) { f.Value = explainedValue{f.Value} })
	err := fs.Parse(args)
	// PrintDefaults names each flag's type from its Value, so -h sees the flag package's own.
	fs.VisitAll(func(f *flag.Flag) { f.Value = f.Value.(explainedValue).Value })
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stderr)
		fmt.Fprintln(stderr, "Usage of forkgraph (every flag but -version also reads the FORKGRAPH_* variable it names):")
		fs.PrintDefaults()
		return err
	case err != nil:
		return usageError{err}
	}
	return nil
}

// explainedValue wraps a flag's Value so that a value it cannot parse is refused with what the
// flag takes instead of the flag package's "parse error".
type explainedValue struct{ flag.Value }

func (v explainedValue) Set(s string) error {
	if err := v.Value.Set(s); err != nil {
		return errors.New(expectedForm(v.Value))
	}
	return nil
}

// IsBoolFlag keeps `-barrier` (no value) working for the boolean flags it wraps.
func (v explainedValue) IsBoolFlag() bool {
	b, ok := v.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// expectedForm says what a flag of value's type takes.
func expectedForm(value flag.Value) string {
	getter, ok := value.(flag.Getter)
	if !ok {
		return "not a valid value"
	}
	switch getter.Get().(type) {
	case time.Duration:
		return "want a duration: a number with a unit, such as 400ms, 2s or 1m"
	case bool:
		return "want true or false"
	case int, int64, uint, uint64:
		return "want a whole number"
	case float64:
		return "want a number"
	}
	return "not a valid value"
}
