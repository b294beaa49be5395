package firstrun

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Issue 27, item 8: the first scrape of a fresh server has every series docs/operations.md and
// the Grafana dashboard name, each label combination known in advance at 0 (the dashboard's
// panels said "No data", and rate() alerts had nothing to start from), and a 403 for a bad Host
// is counted in forkgraph_http_responses_total like every other /graphql response.
func TestFreshServerExportsEveryDocumentedSeries(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	families := scrape(t, s.base)

	for _, name := range documentedMetrics(t) {
		f := families[name]
		if f == nil || len(f.GetMetric()) == 0 {
			t.Errorf("%s is documented but a fresh server exports no series of it", name)
		}
	}

	// Families that count events: every label value known in advance is there, at 0.
	atZero := map[string]struct {
		label  string
		values []string
	}{
		"forkgraph_graphql_errors_total":               {"code", documentedErrorCodes(t)},
		"forkgraph_websocket_closes_total":             {"code", []string{"1000", "1001", "1006", "1011", "1013", "4400", "4401", "4403", "4408", "4409", "4429", "4500", "none", "other"}},
		"forkgraph_stream_results_dropped_total":       {"protocol", []string{"graphql-transport-ws", "graphql-ws", "sse"}},
		"forkgraph_stream_connections_total":           {"protocol", []string{"graphql-transport-ws", "graphql-ws", "sse"}},
		"forkgraph_stream_connections_active":          {"protocol", []string{"graphql-transport-ws", "graphql-ws", "sse"}},
		"forkgraph_subscription_resume_required_total": {"operation", []string{"forkOperationUpdated", "workspaceEvents"}},
		"forkgraph_subscription_events_total":          {"operation", []string{"forkOperationUpdated", "workspaceEvents"}},
		"forkgraph_graphql_subscriptions_active":       {"operation", []string{"forkOperationUpdated", "workspaceEvents"}},
		"forkgraph_fork_lease_renewals_total":          {"result", []string{"renewed", "lost"}},
		"forkgraph_fork_duration_seconds":              {"status", []string{"committed", "failed", "unknown"}},
	}
	for name, want := range atZero {
		got := map[string]float64{}
		for _, m := range families[name].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == want.label {
					got[l.GetValue()] += value(m)
				}
			}
		}
		for _, v := range want.values {
			n, ok := got[v]
			switch {
			case !ok:
				t.Errorf("%s{%s=%q} is missing on a fresh server", name, want.label, v)
			case n != 0 && name != "forkgraph_fork_duration_seconds":
				t.Errorf("%s{%s=%q} is %v on a fresh server, want 0", name, want.label, v, n)
			}
		}
	}
	// The codes exported are exactly the codes docs/api.md lists: a code a response can carry but
	// the table leaves out is undocumented, and one the server does not export would say "No data".
	exported := map[string]bool{}
	for _, m := range families["forkgraph_graphql_errors_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "code" {
				exported[l.GetValue()] = true
			}
		}
	}
	for _, code := range documentedErrorCodes(t) {
		delete(exported, code)
	}
	if len(exported) > 0 {
		t.Errorf("forkgraph_graphql_errors_total exports codes docs/api.md's error table does not list: %v", slices.Sorted(maps.Keys(exported)))
	}

	// Families the start-up itself may move (recovery, the demo seed's fork): present for every
	// known value.
	for name, want := range map[string]struct{ label, value string }{
		"forkgraph_fork_lease_claims_total/startup":        {"claim", "startup"},
		"forkgraph_fork_lease_claims_total/takeover":       {"claim", "takeover"},
		"forkgraph_fork_lease_claims_total/reconcile":      {"claim", "reconcile"},
		"forkgraph_driver_probe_batch_size/simulated":      {"provider", "simulated"},
		"forkgraph_driver_calls_total/reconcile":           {"kind", "reconcile"},
		"forkgraph_dataloader_batch_size/forkability":      {"loader", "forkability"},
		"forkgraph_store_transaction_duration_seconds/rb":  {"outcome", "rollback"},
		"forkgraph_graphql_requests_total/forkSession":     {"operation", "forkSession"},
		"forkgraph_graphql_request_duration_seconds/query": {"operation", "sessions"},
	} {
		family, _, _ := strings.Cut(name, "/")
		if !hasSeries(families, family, want.label, want.value) {
			t.Errorf("%s{%s=%q} is missing on a fresh server", family, want.label, want.value)
		}
	}

	// A bad Host is refused with 403 and counted, as a response and as the error it carries (the
	// edge answers before GraphQL runs, so the GraphQL extension never saw these errors).
	before := sum(families, "forkgraph_http_responses_total", "code", "403")
	errorsBefore := sum(families, "forkgraph_graphql_errors_total", "code", "HOST_NOT_ALLOWED")
	req, _ := http.NewRequest(http.MethodGet, s.base+"/graphql?query=%7B__typename%7D", nil)
	req.Host = "rebinding.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Errors []struct{ Extensions struct{ Code string } }
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || len(body.Errors) == 0 || body.Errors[0].Extensions.Code != "HOST_NOT_ALLOWED" {
		t.Fatalf("a bad Host got %d %+v, want 403 HOST_NOT_ALLOWED", resp.StatusCode, body)
	}
	afterHost := scrape(t, s.base)
	if after := sum(afterHost, "forkgraph_http_responses_total", "code", "403"); after != before+1 {
		t.Errorf("forkgraph_http_responses_total{code=\"403\"} went from %v to %v after a bad Host, want +1", before, after)
	}
	if after := sum(afterHost, "forkgraph_graphql_errors_total", "code", "HOST_NOT_ALLOWED"); after != errorsBefore+1 {
		t.Errorf("forkgraph_graphql_errors_total{code=\"HOST_NOT_ALLOWED\"} went from %v to %v after a bad Host, want +1", errorsBefore, after)
	}
}

// documentedMetrics are the forkgraph_* families docs/operations.md and the dashboard name (a
// histogram's _bucket, _sum and _count are its family).
func documentedMetrics(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, file := range []string{"docs/operations.md", "docs/grafana-dashboard.json"} {
		text, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range regexp.MustCompile(`forkgraph_[a-z_]+[a-z]`).FindAllString(string(text), -1) {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				name = strings.TrimSuffix(name, suffix)
			}
			names = append(names, name)
		}
	}
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	if len(names) < 30 {
		t.Fatalf("found only %d metric names in the docs: %v", len(names), names)
	}
	return names
}

// documentedErrorCodes are the codes of docs/api.md's table of error codes.
func documentedErrorCodes(t *testing.T) []string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(repoRoot, "docs/api.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The rows of the error table only: the one whose header's first cell is `code`. Other tables
	// of the page list other enumerations in their first cell (the resume check's statuses).
	var codes []string
	inTable := false
	for _, line := range strings.Split(string(text), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) >= 3 && strings.TrimSpace(cells[1]) == "`code`" {
			inTable = true
			continue
		}
		if !strings.HasPrefix(line, "|") {
			inTable = false
		}
		if !inTable || len(cells) < 3 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		for _, code := range regexp.MustCompile("`([A-Z][A-Z_]+)`").FindAllStringSubmatch(cells[1], -1) {
			codes = append(codes, code[1])
		}
	}
	if len(codes) < 20 {
		t.Fatalf("found only %d error codes in docs/api.md: %v", len(codes), codes)
	}
	return slices.Compact(slices.Sorted(slices.Values(codes)))
}

func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return families
}

// value is a counter's or gauge's value, a histogram's sample count.
func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

func hasSeries(families map[string]*dto.MetricFamily, name, label, v string) bool {
	for _, m := range families[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label && l.GetValue() == v {
				return true
			}
		}
	}
	return false
}

func sum(families map[string]*dto.MetricFamily, name, label, v string) float64 {
	var total float64
	for _, m := range families[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label && l.GetValue() == v {
				total += value(m)
			}
		}
	}
	return total
}
