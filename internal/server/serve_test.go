package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/store"
)

// Issue 10: a request still being answered at SIGTERM was cancelled (the client got "the
// operation produced no result"). Now shutdown stops accepting and lets it finish, with its
// context intact, before serve returns.
func TestShutdownLetsInFlightRequestsFinish(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, engine := openEngine(t, ctx)

	started, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		select {
		case <-release:
			_, _ = io.WriteString(w, "finished")
		case <-r.Context().Done():
			http.Error(w, "cancelled", http.StatusServiceUnavailable)
		}
	})
	obs, err := newObservability(ctx, observeConfig{}, Options{}.withDefaults(), quiet, db)
	require.NoError(t, err)
	addr, served := serveOnLoopback(t, ctx, h, engine, obs)

	answer := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + addr + "/slow")
		if err != nil {
			answer <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		answer <- string(body)
	}()
	<-started
	cancel() // SIGTERM
	// Shutdown closes the listener first: once a dial is refused, the drain has begun.
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		_ = conn.Close()
	}
	close(release)
	require.Equal(t, "finished", <-answer)
	require.NoError(t, <-served)
}

var quiet = slog.New(slog.DiscardHandler)

// testStore opens a store on a fresh SQLite file, closed when the test ends.
func testStore(t *testing.T, ctx context.Context) *store.DB {
	db, err := store.Open(ctx, store.Config{Driver: "sqlite", DSN: filepath.Join(t.TempDir(), "d.db"), Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// openEngine is testStore with an engine on it that has no drivers.
func openEngine(t *testing.T, ctx context.Context) (*store.DB, *forkengine.Engine) {
	db := testStore(t, ctx)
	engine, err := forkengine.New(forkengine.Config{Store: db, Drivers: map[string]forkengine.Driver{}, Logger: quiet})
	require.NoError(t, err)
	return db, engine
}

// /readyz turns 503 the moment shutdown begins, while in-flight requests still finish: serve
// calls StartDrain before it stops accepting.
func TestReadinessDrainsWithShutdown(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, engine := openEngine(t, ctx)
	obs, err := newObservability(ctx, observeConfig{}, Options{}.withDefaults(), quiet, db)
	require.NoError(t, err)
	require.Equal(t, "recovering", obs.ready.Ready(ctx), "unready until the recovery pass is done")
	obs.ready.MarkRecovered()

	started, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	obs.register(mux)
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
	})
	addr, served := serveOnLoopback(t, ctx, mux, engine, obs)
	base := "http://" + addr

	resp, err := http.Get(base + "/readyz")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.Get(base + "/slow"); err == nil {
			_ = resp.Body.Close()
		}
	}()
	<-started
	cancel() // SIGTERM, with /slow still in flight
	for {    // shutdown closes the listener after StartDrain: once a dial is refused, the drain has begun
		conn, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), time.Second)
		if err != nil {
			break
		}
		_ = conn.Close()
	}
	require.Equal(t, "draining", obs.ready.Ready(context.Background()), "unready while in-flight requests finish")
	close(release)
	<-done
	require.NoError(t, <-served)
}

// /healthz is liveness only: with the database gone it still answers 200 (an orchestrator must
// not restart a process for an outage it cannot fix), while /readyz says the database is away.
func TestHealthzIsLivenessOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testStore(t, ctx)
	obs, err := newObservability(ctx, observeConfig{}, Options{}.withDefaults(), quiet, db)
	require.NoError(t, err)
	obs.ready.MarkRecovered()
	require.NoError(t, db.Close()) // every read fails from here on
	cfg, err := parseConfig(nil, func(string) string { return "" }, io.Discard)
	require.NoError(t, err)
	srv := httptest.NewServer(routes(cfg, nil, obs))
	defer srv.Close()

	get := func(path string) (int, map[string]string) {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		var body map[string]string
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		return resp.StatusCode, body
	}
	code, body := get("/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code, "readiness reads the database")
	require.Equal(t, "database unavailable", body["reason"])
	code, body = get("/healthz")
	require.Equal(t, http.StatusOK, code, "liveness does not")
	require.Equal(t, "ok", body["status"])
	require.Equal(t, runtime.Version(), body["go"])
}

// serveOnLoopback runs serve with h on 127.0.0.1:0 until ctx ends, and returns the address it
// printed and the channel serve's error arrives on.
func serveOnLoopback(t *testing.T, ctx context.Context, h http.Handler, engine *forkengine.Engine, obs *observability) (string, <-chan error) {
	t.Helper()
	cfg := config{addr: "127.0.0.1:0"}
	lns, err := listen(cfg)
	require.NoError(t, err)
	stdout, lines := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- serve(ctx, cfg, lns, h, engine, obs, lines, quiet)
		_ = lines.Close()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	_, rest, _ := strings.Cut(line, "http://")
	return strings.TrimSuffix(strings.Fields(rest)[0], "/"), served
}
