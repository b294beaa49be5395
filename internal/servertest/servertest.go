// Package servertest starts the whole forkgraph server in a test, the way the command does: the
// same server.Run, on a real listener (127.0.0.1:0), with a real SQLite file (or a postgres://
// URL), and hands the test its URL and a GraphQL client. Tests of one package's feature belong in
// that package; this fixture is for the ones that need everything wired together (persisted
// queries through the edge, credentials ending streams, metrics of a workload, shutdown).
package servertest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/forkgraph/forkgraph/internal/server"
	"github.com/forkgraph/forkgraph/telemetry"
)

// startLimit bounds how long a start or a shutdown may take before the test fails; generous,
// because a loaded machine migrates a new SQLite file slowly, and never waited for in full when
// the server is well.
const startLimit = 30 * time.Second

// Options are the process's side of a start: the environment, where the logs go, the tracer.
type Options struct {
	// Getenv reads the FORKGRAPH_* and OTEL_* variables; nil: none is set.
	Getenv func(string) string
	// Stderr receives the server's logs; nil: discarded.
	Stderr io.Writer
	// NewTracerProvider replaces the OTEL_* tracer provider (server.Options.NewTracerProvider).
	NewTracerProvider func(context.Context, func(string) string, telemetry.Build) (trace.TracerProvider, func(context.Context) error, error)
}

// Server is one server.Run serving in this process until Stop or the test's end.
type Server struct {
	// URL is the API listener's base URL, http://127.0.0.1:port, without a trailing slash.
	URL     string
	t       testing.TB
	cancel  context.CancelFunc
	done    chan error
	stopped bool
	err     error
}

// SQLite is a new database file in the test's temporary directory, for Start's db.
func SQLite(t testing.TB) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "forkgraph.db")
}

// Start runs the server on 127.0.0.1:0 with db (a SQLite file or a postgres:// URL), a 30 ms
// simulated provider and the extra flags (later flags win), and returns once it answers
// /healthz. The test's cleanup stops it.
func Start(t testing.TB, db string, extra ...string) *Server {
	t.Helper()
	return StartWith(t, Options{}, db, extra...)
}

// StartWith is Start with the environment, log output and tracer given.
func StartWith(t testing.TB, opts Options, db string, extra ...string) *Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, lines := io.Pipe()
	args := append([]string{"-addr", "127.0.0.1:0", "-db", db, "-sim-latency", "30ms"}, extra...)
	s := &Server{t: t, cancel: cancel, done: make(chan error, 1)}
	go func() {
		s.done <- server.Run(ctx, args, server.Options{Getenv: opts.Getenv, Stdout: lines, Stderr: opts.Stderr,
			NewTracerProvider: opts.NewTracerProvider})
		_ = lines.Close()
	}()
	urls := make(chan string, 1)
	go func() { // reads stdout to its end, so the server never blocks writing it
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			if _, rest, ok := strings.Cut(scanner.Text(), "listening on "); ok {
				urls <- strings.TrimSuffix(strings.Fields(rest)[0], "/")
			}
		}
	}()
	select {
	case s.URL = <-urls:
	case err := <-s.done:
		cancel()
		t.Fatalf("server exited before listening: %v", err)
	case <-time.After(startLimit):
		cancel()
		t.Fatal("server did not print its address")
	}
	t.Cleanup(func() { _ = s.Stop() })
	// The listener was open before the line was printed, so this request waits in its backlog
	// until the server accepts it: no polling.
	client := http.Client{Timeout: startLimit}
	resp, err := client.Get(s.URL + "/healthz")
	if err != nil {
		t.Fatalf("/healthz: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz answered %d", resp.StatusCode)
	}
	return s
}

// Stop cancels the server's context (as SIGTERM does) and returns Run's error once it has shut
// down; calling it again returns the same error.
func (s *Server) Stop() error {
	if s.stopped {
		return s.err
	}
	s.stopped = true
	s.cancel()
	select {
	case s.err = <-s.done:
	case <-time.After(startLimit):
		s.err = fmt.Errorf("server did not shut down within %s", startLimit)
	}
	return s.err
}

// Client is a GraphQL client of the server for t with the bearer token (empty: none).
func (s *Server) Client(t *testing.T, token string) Client {
	return Client{T: t, Base: s.URL, Token: token}
}

// PostgresDSNEnv names the variable holding the PostgreSQL test cluster's URL
// (scripts/start-postgres.sh prints it; scripts/test-postgres.sh sets it).
const PostgresDSNEnv = "FORKGRAPH_TEST_POSTGRES_DSN"

// Postgres is a postgres:// URL, for Start's db, whose connections use a schema of the test's
// own in PostgresDSNEnv's database, dropped at the test's end. Without the variable the test is
// skipped, as every PostgreSQL test of the repository is; scripts/test-postgres.sh runs them.
func Postgres(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresDSNEnv)
	if base == "" {
		t.Skipf("%s is not set; run: eval \"$(scripts/start-postgres.sh)\"", PostgresDSNEnv)
	}
	if !strings.Contains(base, "://") {
		t.Fatalf("%s must be a postgres:// URL, as the server's -db takes", PostgresDSNEnv)
	}
	admin, err := gorm.Open(postgres.Open(base), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatalf("connect to %s: %v", PostgresDSNEnv, err)
	}
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	schema := "forkgraph_servertest_" + hex.EncodeToString(suffix)
	if err := admin.Exec("CREATE SCHEMA " + schema).Error; err != nil {
		t.Fatalf("create schema %s: %v", schema, err)
	}
	t.Cleanup(func() { // after the server's Stop, which the test registered later and so runs first
		if err := admin.Exec("DROP SCHEMA " + schema + " CASCADE").Error; err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
		if sqlDB, err := admin.DB(); err == nil {
			_ = sqlDB.Close()
		}
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}
