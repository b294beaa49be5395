package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDebugListenerIsLoopbackOnly(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", ":0", "10.1.2.3:6060", "example.com:6060", "nonsense"} {
		_, err := listenDebug(addr)
		require.Error(t, err, addr)
	}
	cfg, err := parseConfig(nil, func(k string) string { return map[string]string{"FORKGRAPH_DEBUG_ADDR": "127.0.0.1:0"}[k] }, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:0", cfg.debugAddr)
}

func TestDebugListenerServesMemoryStatistics(t *testing.T) {
	t.Parallel()
	ln, err := listenDebug("127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	stop := serveDebug(ln, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer func() { require.NoError(t, stop(context.Background())) }()
	resp, err := http.Get("http://" + addr + "/debug/pprof/heap?debug=1")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), "# HeapInuse = ")
	require.Contains(t, string(body), "# Stack = ")
}
