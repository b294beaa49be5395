package server_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/telemetry"
)

// metricName finds the metric names in a PromQL expression: forkgraph's own and the Go and
// process collectors'.
var metricName = regexp.MustCompile(`\b(?:forkgraph|go|process)_[a-zA-Z0-9_]+`)

// quietUntilItHappens are the families the dashboard queries that the scripted workload does not
// provoke (a subscriber falling behind, a result for a closing connection, a lease claimed or
// renewed: the lease sweep runs every third of a lease), so a scrape after it shows no series of
// theirs yet.
var quietUntilItHappens = []string{"forkgraph_stream_results_dropped_total", "forkgraph_subscription_resume_required_total",
	"forkgraph_fork_lease_claims_total", "forkgraph_fork_lease_renewals_total"}

// dashboardMetrics returns every metric name the dashboard's panels and variables query.
func dashboardMetrics(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../../docs/grafana-dashboard.json") // the repository root, from this package
	require.NoError(t, err)
	var doc any
	require.NoError(t, json.Unmarshal(raw, &doc), "the dashboard is JSON")
	seen := map[string]bool{}
	var walk func(v any, key string)
	walk = func(v any, key string) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				walk(child, k)
			}
		case []any:
			for _, child := range v {
				walk(child, key)
			}
		case string:
			if key == "expr" || key == "query" || key == "definition" {
				for _, name := range metricName.FindAllString(v, -1) {
					seen[name] = true
				}
			}
		}
	}
	walk(doc, "")
	names := make([]string, 0, len(seen))
	for name := range seen {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// requireDashboardMetricsExist checks that every metric the dashboard queries is served: it has
// series in the scrape taken after the workload (a histogram's _bucket, _sum and _count name
// its family), or it is registered and only waiting for its event (quietUntilItHappens).
func requireDashboardMetricsExist(t *testing.T, scraped map[string]*dto.MetricFamily) {
	t.Helper()
	fresh := telemetry.New(telemetry.Options{})
	fresh.Metrics.WatchPool(func() sql.DBStats { return sql.DBStats{} })
	fresh.Metrics.WatchFeed(func() int64 { return 0 }, func(context.Context) (int64, error) { return 0, nil })
	registered := fresh.Metrics.Names()
	names := dashboardMetrics(t)
	require.Greater(t, len(names), 20, "the dashboard queries the metrics")
	for _, name := range names {
		family := name
		if _, ok := scraped[name]; !ok {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if base, found := strings.CutSuffix(name, suffix); found && scraped[base].GetType() == dto.MetricType_HISTOGRAM {
					family = base
				}
			}
		}
		if _, ok := scraped[family]; ok {
			continue
		}
		require.Contains(t, quietUntilItHappens, family, "the dashboard queries %s, which the server does not serve", name)
		require.True(t, slices.Contains(registered, family), "%s is registered", family)
	}
}
