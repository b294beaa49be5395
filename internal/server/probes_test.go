package server_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestProbesAndSeparateMetricsListener(t *testing.T) {
	t.Parallel()
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
