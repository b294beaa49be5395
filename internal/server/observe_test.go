package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/internal/await"
	"github.com/forkgraph/forkgraph/internal/servertest"
)

// Things the workload sends that no log line may contain.
const (
	secretToken   = "tok-7f3a-never-logged"
	secretContent = "ZEBRA-TRANSCRIPT-91-never-logged"
)

// workload is what one scripted run did, for the assertions.
type workload struct {
	committedPhases, failedPhases []string
	sseEvents                     int
	listed                        int // sessions each of the three Sessions queries returned
}

// runWorkload drives the demo workspace: three named queries, a message with distinctive
// content (also sent in a GET query string), a fork to COMMITTED and a refused fork to FAILED,
// each followed over its own websocket (the committed one over SSE too, then acknowledged), and
// one mutation that fails with NOT_FOUND.
func runWorkload(t *testing.T, c servertest.Client) workload {
	t.Helper()
	var w workload
	for range 3 {
		var page struct{ Sessions struct{ Edges []struct{} } }
		c.Must(`query Sessions { sessions(workspaceId: "demo") { totalCount edges { node { latestTurn { id } } } } }`, nil, &page)
		w.listed = len(page.Sessions.Edges)
	}
	c.Must(`mutation Report { reportSession(input: {workspaceId: "demo", id: "logged", provider: "simulated",
		providerSessionId: "p-logged"}) { id } }`, nil, nil)
	c.Must(`mutation Turn { reportTurn(input: {workspaceId: "demo", sessionId: "logged", id: "logged-t1",
		phase: SETTLED, outcome: COMPLETED, providerTurnId: "p-logged-t1", providerTurnBinding: {n: 1}}) { id } }`, nil, nil)
	c.Must(`mutation Append($text: String!) { appendMessages(input: {workspaceId: "demo", sessionId: "logged",
		turnId: "logged-t1", messages: [{role: USER, content: $text}]}) { id } }`, map[string]any{"text": secretContent}, nil)
	get, err := http.NewRequest(http.MethodGet, c.Base+"/graphql?query="+url.QueryEscape(
		`query Transcript($c: String) { sessions(workspaceId: "demo", filter: {provider: $c}) { totalCount } }`)+"&variables="+
		url.QueryEscape(`{"c":"`+secretContent+`"}`), nil)
	require.NoError(t, err)
	get.Header.Set("Authorization", "Bearer "+secretToken)
	resp, err := http.DefaultClient.Do(get)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	var fork struct{ ForkSession struct{ ID string } }
	c.Must(`mutation Fork { forkSession(input: {workspaceId: "demo", sourceSessionId: "billing-refactor",
		throughTurnId: "billing-refactor-t2", requestId: "ops-commit"}) { id } }`, nil, &fork)
	w.committedPhases = c.FollowFork("demo", fork.ForkSession.ID, nil)
	require.Equal(t, "COMMITTED", w.committedPhases[len(w.committedPhases)-1])
	w.sseEvents = c.FollowSSE("demo", fork.ForkSession.ID)
	require.Equal(t, 1, w.sseEvents, "a committed fork: its state, then complete")
	c.Must(`mutation Ack($id: ID!) { acknowledgeForkOperation(workspaceId: "demo", id: $id) { acknowledgedAt } }`,
		map[string]any{"id": fork.ForkSession.ID}, nil) // an event, but no transition
	c.Must(`mutation Fork { forkSession(input: {workspaceId: "demo", sourceSessionId: "refusing-provider",
		throughTurnId: "refusing-provider-t2", requestId: "ops-fail"}) { id } }`, nil, &fork)
	w.failedPhases = c.FollowFork("demo", fork.ForkSession.ID, nil)
	require.Equal(t, "FAILED", w.failedPhases[len(w.failedPhases)-1])

	require.Equal(t, []string{"NOT_FOUND"}, c.Do(`mutation Delete { deleteSession(workspaceId: "demo", id: "missing") }`, nil, nil))
	return w
}

// awaitMetric scrapes until name{want} reaches value (failing after 10 s) and returns that
// scrape: the websocket's close is counted when the server has read the client's close frame,
// which the client cannot observe.
func awaitMetric(t *testing.T, base, name string, want map[string]string, value float64) map[string]*dto.MetricFamily {
	t.Helper()
	var families map[string]*dto.MetricFamily
	await.Until(t, 10*time.Second, fmt.Sprintf("%s%v reaches %v", name, want, value), func() bool {
		_, families = scrape(t, base)
		return sample(families, name, want) >= value
	})
	return families
}

func TestMetricsCountTheWorkload(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	base, stop := startServerWith(t, func(string) string { return "" }, logs, filepath.Join(t.TempDir(), "fg.db"),
		"-tokens", secretToken+"=demo", "-log-format", "json")
	c := servertest.Client{T: t, Base: base, Token: secretToken}
	_, before := scrape(t, base)
	w := runWorkload(t, c)
	closes := sample(before, "forkgraph_websocket_closes_total", labels("code", "1000"))
	awaitMetric(t, base, "forkgraph_websocket_closes_total", labels("code", "1000"), closes+2)
	// Read once more: a scrape gathers one family after another, so the one that saw the second
	// close counted may have read the active gauge before that close's decrement (Closed
	// decrements, then counts the close). A scrape begun after it sees both.
	_, after := scrape(t, base)

	delta := func(name string, kv ...string) float64 {
		return sample(after, name, labels(kv...)) - sample(before, name, labels(kv...))
	}
	requests := "forkgraph_graphql_requests_total"
	require.Equal(t, 3.0, delta(requests, "type", "query", "operation", "Sessions", "code", "OK"))
	require.Equal(t, 1.0, delta(requests, "type", "query", "operation", "Transcript", "code", "OK"))
	require.Equal(t, 2.0, delta(requests, "type", "mutation", "operation", "Fork", "code", "OK"))
	require.Equal(t, 1.0, delta(requests, "type", "mutation", "operation", "Delete", "code", "NOT_FOUND"))
	require.Equal(t, 2.0, delta(requests, "type", "subscription", "operation", "Follow", "code", "OK"))
	require.Equal(t, 1.0, delta(requests, "type", "subscription", "operation", "FollowSSE", "code", "OK"))
	require.Equal(t, 1.0, delta("forkgraph_subscription_events_total", "operation", "FollowSSE"))
	require.Equal(t, 1.0, delta("forkgraph_stream_connections_total", "protocol", "sse"))
	require.Equal(t, 0.0, sample(after, "forkgraph_stream_connections_active", labels("protocol", "sse")))
	require.Equal(t, 1.0, delta("forkgraph_graphql_errors_total", "code", "NOT_FOUND"))
	require.Equal(t, 3.0, delta("forkgraph_graphql_request_duration_seconds", "operation", "Sessions"))
	require.Equal(t, 0.0, sample(after, "forkgraph_graphql_subscriptions_active", labels("operation", "Follow")))
	require.Equal(t, float64(len(w.committedPhases)+len(w.failedPhases)),
		delta("forkgraph_subscription_events_total", "operation", "Follow"), "every next message the client read")

	require.Equal(t, 2.0, delta("forkgraph_stream_connections_total", "protocol", "graphql-transport-ws"))
	require.Equal(t, 2.0, delta("forkgraph_websocket_closes_total", "code", "1000"))
	require.Equal(t, 0.0, sample(after, "forkgraph_stream_connections_active", labels("protocol", "graphql-transport-ws")))
	require.Equal(t, 0.0, sample(after, "forkgraph_websocket_queue_bytes", nil))
	require.Equal(t, 2.0, delta("forkgraph_http_responses_total", "code", "101"))
	require.Equal(t, 12.0, delta("forkgraph_http_responses_total", "code", "200"), "ten POSTs, one GET, one SSE stream")
	require.Equal(t, 1.0, delta(requests, "type", "mutation", "operation", "Ack", "code", "OK"))

	require.Equal(t, 2.0, delta("forkgraph_fork_transitions_total", "status", "prepared"))
	require.Equal(t, 1.0, delta("forkgraph_fork_transitions_total", "status", "committed"), "the acknowledgement is no transition")
	require.Equal(t, 1.0, delta("forkgraph_fork_transitions_total", "status", "failed"))
	require.Equal(t, 1.0, delta("forkgraph_fork_duration_seconds", "status", "committed"))
	require.Equal(t, 1.0, delta("forkgraph_fork_duration_seconds", "status", "failed"))
	require.GreaterOrEqual(t, histogramSum(after, "forkgraph_fork_duration_seconds", labels("status", "committed"))-
		histogramSum(before, "forkgraph_fork_duration_seconds", labels("status", "committed")), 0.03,
		"the simulated provider takes 30ms")

	driver := "forkgraph_driver_calls_total"
	require.Equal(t, 1.0, delta(driver, "provider", "simulated", "kind", "fork", "disposition", "accepted"))
	require.Equal(t, 1.0, delta(driver, "provider", "simulated", "kind", "fork", "disposition", "rejected"))
	require.Equal(t, 4.0, delta(driver, "provider", "simulated", "kind", "describe", "disposition", "ok"),
		"each fork describes its source when it starts and again before dispatch")
	require.Equal(t, 2.0, delta(driver, "provider", "simulated", "kind", "probe", "disposition", "ok"))
	require.Equal(t, 2.0, delta("forkgraph_driver_probe_batch_size", "provider", "simulated"))
	require.Equal(t, 8.0, delta("forkgraph_driver_call_duration_seconds", "provider", "simulated"), "four describes, two probes, two forks")
	require.Equal(t, 3.0, delta("forkgraph_dataloader_batch_size", "loader", "latestTurn"), "one batch per Sessions query")
	require.GreaterOrEqual(t, w.listed, 4, "the demo's seeded sessions")
	require.Equal(t, float64(3*w.listed), histogramSum(after, "forkgraph_dataloader_batch_size", labels("loader", "latestTurn"))-
		histogramSum(before, "forkgraph_dataloader_batch_size", labels("loader", "latestTurn")), "the demo's sessions each time")
	require.Greater(t, delta("forkgraph_store_transaction_duration_seconds", "outcome", "commit"), 0.0)
	require.GreaterOrEqual(t, sample(after, "forkgraph_store_pool_open_connections", nil), 1.0)
	// The workload's commits are copied out of the write-ahead log 50 ms after they settle.
	passes := sample(before, "forkgraph_store_sqlite_checkpoints_total", nil) + 1
	checkpoints := awaitMetric(t, base, "forkgraph_store_sqlite_checkpoints_total", nil, passes)
	require.GreaterOrEqual(t, sample(checkpoints, "forkgraph_store_sqlite_checkpoints_total", nil), passes)
	require.Positive(t, sample(checkpoints, "forkgraph_store_sqlite_checkpoint_seconds_total", nil))
	require.Greater(t, sample(after, "forkgraph_store_sqlite_write_transactions_total", nil),
		sample(before, "forkgraph_store_sqlite_write_transactions_total", nil), "the workload's writes")
	require.NotNil(t, after["forkgraph_store_sqlite_grouped_writes_total"])
	require.Greater(t, sample(after, "forkgraph_event_feed_position", nil), sample(before, "forkgraph_event_feed_position", nil))
	require.Equal(t, 0.0, sample(after, "forkgraph_event_feed_lag_events", nil), "the feed delivered every event the clients saw")
	require.Equal(t, 1.0, sample(after, "forkgraph_build_info", labels("goversion", runtime.Version())))
	require.NotNil(t, after["go_goroutines"])
	require.NotNil(t, after["process_cpu_seconds_total"])

	raw, _ := scrape(t, base)
	problems, err := promlint.New(bytes.NewReader(raw)).Lint()
	require.NoError(t, err)
	require.Empty(t, problems, "the exposition passes client_golang's lint")
	requireDashboardMetricsExist(t, after)

	require.NoError(t, stop())
	requireCleanLogs(t, logs.String())
}

// requireCleanLogs checks every line is JSON, none carries the token or the transcript text,
// and the request, operation and websocket lines are there.
func requireCleanLogs(t *testing.T, out string) {
	t.Helper()
	require.NotContains(t, out, secretToken)
	require.NotContains(t, out, secretContent)
	seen := map[string]int{}
	outcomes := map[string]string{} // operation → "type outcome" of the http request lines
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var entry map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &entry), "not JSON: %s", line)
		msg, _ := entry["msg"].(string)
		seen[msg]++
		if msg == "http request" {
			require.NotEmpty(t, entry["requestId"], line)
			require.NotContains(t, line, "?", "no query string: %s", line)
		}
		if msg == "http request" {
			if op, ok := entry["operation"].(string); ok {
				outcomes[op] = entry["type"].(string) + " " + entry["outcome"].(string)
			}
		}
	}
	require.Equal(t, "query OK", outcomes["Sessions"])
	require.Equal(t, "mutation NOT_FOUND", outcomes["Delete"])
	require.Equal(t, "subscription OK", outcomes["FollowSSE"], "an SSE stream is one request")
	require.GreaterOrEqual(t, seen["http request"], 14)
	require.Equal(t, 2, seen["websocket closed"], "one line per connection")
	require.Equal(t, 2, seen["graphql operation"], "one line per websocket operation")
}
