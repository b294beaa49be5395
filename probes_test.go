package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
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

func TestHelpAndVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	none := func(string) string { return "" }
	require.NoError(t, run(context.Background(), []string{"-h"}, none, &stdout, &stderr), "-h is not an error")
	for _, flag := range []string{"-log-format", "-log-level", "-metrics-addr", "-version", "FORKGRAPH_LOG_FORMAT"} {
		require.Contains(t, stderr.String(), flag)
	}
	stdout.Reset()
	require.NoError(t, run(context.Background(), []string{"-version"}, none, &stdout, &stderr))
	require.Contains(t, stdout.String(), "forkgraph ")
	require.Contains(t, stdout.String(), runtime.Version())
	require.ErrorContains(t, run(context.Background(), []string{"-log-format", "xml", "-db", filepath.Join(t.TempDir(), "x.db")},
		none, &stdout, &stderr), "log format")
}

func TestObserveFlagsHaveVariables(t *testing.T) {
	env := map[string]string{"FORKGRAPH_LOG_FORMAT": "json", "FORKGRAPH_LOG_LEVEL": "warn", "FORKGRAPH_METRICS_ADDR": "127.0.0.1:9464"}
	cfg, err := parseConfig([]string{"-log-level", "debug"}, func(k string) string { return env[k] }, io.Discard)
	require.NoError(t, err)
	require.Equal(t, observeConfig{logFormat: "json", logLevel: "debug", metricsAddr: "127.0.0.1:9464"}, cfg.observe,
		"variables set the defaults, a flag wins")
	cfg, err = parseConfig(nil, func(string) string { return "" }, io.Discard)
	require.NoError(t, err)
	require.Equal(t, observeConfig{logFormat: "text", logLevel: "info"}, cfg.observe)
}

func TestProbesAndSeparateMetricsListener(t *testing.T) {
	logs := &syncBuffer{}
	base, _ := startServerWith(t, func(string) string { return "" }, logs, filepath.Join(t.TempDir(), "fg.db"),
		"-no-seed", "-metrics-addr", "127.0.0.1:0", "-log-format", "json")
	resp, err := http.Get(base + "/readyz")
	require.NoError(t, err)
	var body map[string]string
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "ready", body["status"])

	resp, err = http.Get(base + "/healthz")
	require.NoError(t, err)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	_ = resp.Body.Close()
	require.Equal(t, "ok", body["status"])
	require.Equal(t, runtime.Version(), body["go"])
	require.NotEmpty(t, body["version"])

	resp, err = http.Get(base + "/metrics")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.NotEqual(t, http.StatusOK, resp.StatusCode, "with -metrics-addr, the API listener serves no metrics")

	var metricsURL string
	for _, line := range strings.Split(logs.String(), "\n") {
		var entry struct{ Msg, URL string }
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "metrics listener" {
			metricsURL = entry.URL
		}
	}
	require.NotEmpty(t, metricsURL, "the metrics listener logs its address")
	_, families := scrape(t, strings.TrimSuffix(metricsURL, "/metrics"))
	require.NotNil(t, families["forkgraph_build_info"], "the metrics listener serves them")
}

// /readyz turns 503 the moment shutdown begins, while in-flight requests still finish: serve
// calls StartDrain before it stops accepting.
func TestReadinessDrainsWithShutdown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, err := store.Open(ctx, store.Config{Driver: "sqlite", DSN: filepath.Join(t.TempDir(), "d.db"), Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	engine, err := forkengine.New(forkengine.Config{Store: db, Drivers: map[string]forkengine.Driver{}, Logger: quiet})
	require.NoError(t, err)
	obs, err := newObservability(ctx, observeConfig{}, func(string) string { return "" }, quiet, db)
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
	cfg := config{addr: "127.0.0.1:0"}
	lns, err := listen(cfg)
	require.NoError(t, err)
	stdout, lines := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- serve(ctx, cfg, lns, mux, engine, obs, lines, quiet)
		_ = lines.Close()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	_, rest, _ := strings.Cut(line, "http://")
	base := "http://" + strings.TrimSuffix(strings.Fields(rest)[0], "/")

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
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{Driver: "sqlite", DSN: filepath.Join(t.TempDir(), "d.db"), Logger: quiet})
	require.NoError(t, err)
	obs, err := newObservability(ctx, observeConfig{}, func(string) string { return "" }, quiet, db)
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
