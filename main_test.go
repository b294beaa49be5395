package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/internal/server"
)

// The command's own job: -h, -version with the stamps a release build links in, a refused
// command line. The flags themselves are internal/server's (config_test.go).
func TestHelpAndVersion(t *testing.T) {
	t.Parallel()
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

	err := run(context.Background(), []string{"-no-such-flag"}, none, &stdout, &stderr)
	require.True(t, server.IsUsage(err), "main exits 2 with a hint to -h: %v", err)
}

// TestVersionStampsReachTheServer: `make build` links -X main.version and main.commit, and run
// hands them to the server, so -version reports them.
func TestVersionStampsReachTheServer(t *testing.T) {
	// Not parallel: it sets the package's stamps, which the other tests' -version reads.
	previous, previousCommit := version, commit
	version, commit = "v9.9.9-stamp", "0123456789abcdef"
	t.Cleanup(func() { version, commit = previous, previousCommit })
	var stdout bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"-version"}, func(string) string { return "" }, &stdout, io.Discard))
	require.Contains(t, stdout.String(), "v9.9.9-stamp")
	require.Contains(t, stdout.String(), "0123456789abcdef")
}

// TestRunServesUntilCancelled: run reads the environment it is given, serves, and returns nil
// after a clean shutdown when its context ends (main's SIGTERM).
func TestRunServesUntilCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := map[string]string{"FORKGRAPH_ADDR": "127.0.0.1:0", "FORKGRAPH_NO_SEED": "true",
		"FORKGRAPH_DB": filepath.Join(t.TempDir(), "fg.db")}
	stdout, lines := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, nil, func(k string) string { return env[k] }, lines, io.Discard)
		_ = lines.Close()
	}()
	urls := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			if _, rest, ok := strings.Cut(scanner.Text(), "listening on "); ok {
				urls <- strings.TrimSuffix(strings.Fields(rest)[0], "/")
			}
		}
	}()
	var base string
	select {
	case base = <-urls:
	case err := <-done:
		t.Fatalf("run returned before listening: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("run did not print its address")
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(base + "/healthz") // the listener is open: no polling
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err, "a clean shutdown")
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return after its context ended")
	}
}
