package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Buckets of the histograms, in seconds or items.
var (
	requestBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	forkBuckets    = []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}
	driverBuckets  = []float64{.001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	txBuckets      = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 5}
	batchBuckets   = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500}
)

// Metrics holds every forkgraph collector in its own registry, beside the Go and process
// collectors and forkgraph_build_info.
type Metrics struct {
	// Registry gathers everything below; /metrics serves it.
	Registry *prometheus.Registry

	graphqlRequests   *prometheus.CounterVec
	graphqlDuration   *prometheus.HistogramVec
	graphqlErrors     *prometheus.CounterVec
	subscriptions     *prometheus.GaugeVec
	subscriptionSent  *prometheus.CounterVec
	resumeRequired    *prometheus.CounterVec
	httpResponses     *prometheus.CounterVec
	connections       *prometheus.GaugeVec
	connectionsOpened *prometheus.CounterVec
	websocketCloses   *prometheus.CounterVec
	queueBytes        prometheus.Gauge
	dropped           *prometheus.CounterVec
	forkTransitions   *prometheus.CounterVec
	forkDuration      *prometheus.HistogramVec
	driverCalls       *prometheus.CounterVec
	driverDuration    *prometheus.HistogramVec
	probeBatch        *prometheus.HistogramVec
	loaderBatch       *prometheus.HistogramVec
	txDuration        *prometheus.HistogramVec
	leaseClaims       *prometheus.CounterVec
	leaseRenewals     *prometheus.CounterVec
	// credentialRefreshes and credentialKeys: see registerCredentials.
	credentialRefreshes *prometheus.CounterVec
	credentialKeys      *prometheus.GaugeVec

	names []string // of the forkgraph_* families, for Names
}

// NewMetrics builds the collectors and registers them, with the Go and process collectors and
// forkgraph_build_info{version,commit,goversion} = 1, and exports the label combinations of the
// fixed label sets at 0 (seed.go).
func NewMetrics(build Build) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{Registry: reg}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		m.names = append(m.names, name)
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		reg.MustRegister(c)
		return c
	}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		m.names = append(m.names, name)
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
		reg.MustRegister(g)
		return g
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		m.names = append(m.names, name)
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
		reg.MustRegister(h)
		return h
	}
	m.graphqlRequests = counter("forkgraph_graphql_requests_total",
		"GraphQL operations finished, by operation type, operation name and outcome code (OK or the first error's code).",
		"type", "operation", "code")
	m.graphqlDuration = histogram("forkgraph_graphql_request_duration_seconds",
		"Time from the start of a query or mutation to its response.", requestBuckets, "type", "operation")
	m.graphqlErrors = counter("forkgraph_graphql_errors_total",
		"Errors sent in GraphQL responses (subscription events and stream ends included), by extensions.code.", "code")
	m.subscriptions = gauge("forkgraph_graphql_subscriptions_active", "Subscriptions running now, by operation name.", "operation")
	m.subscriptionSent = counter("forkgraph_subscription_events_total",
		"Subscription results handed to a transport for delivery, by operation name.", "operation")
	m.resumeRequired = counter("forkgraph_subscription_resume_required_total",
		"Subscriptions ended with RESUME_REQUIRED because the subscriber fell behind, by operation name.", "operation")
	m.httpResponses = counter("forkgraph_http_responses_total",
		"HTTP responses of /graphql by status code (101 for a websocket upgrade; 413, 429 come from the edge).", "code")
	m.connections = gauge("forkgraph_stream_connections_active",
		"Open websocket connections and SSE streams, by protocol (graphql-transport-ws, graphql-ws, sse).", "protocol")
	m.connectionsOpened = counter("forkgraph_stream_connections_total",
		"Websocket connections and SSE streams opened, by protocol.", "protocol")
	m.websocketCloses = counter("forkgraph_websocket_closes_total",
		"Websocket connections closed, by close code (the server's, else the client's; none: the network failed; other: an unlisted code).", "code")
	m.queueBytes = gauge("forkgraph_websocket_queue_bytes", "Bytes waiting in websocket send queues.").WithLabelValues()
	m.dropped = counter("forkgraph_stream_results_dropped_total",
		"Subscription results not sent because their connection was closing, by protocol.", "protocol")
	m.forkTransitions = counter("forkgraph_fork_transitions_total",
		"Fork operation status changes committed by this instance, by new status.", "status")
	m.forkDuration = histogram("forkgraph_fork_duration_seconds",
		"Time from a fork's freeze (prepared) to its terminal status, by that status.", forkBuckets, "status")
	m.driverCalls = counter("forkgraph_driver_calls_total",
		"Provider driver calls by provider, kind (describe, probe, fork, reconcile, recover_binding) and disposition (the answer of a fork, reconcile or binding recovery; ok or error otherwise).",
		"provider", "kind", "disposition")
	m.driverDuration = histogram("forkgraph_driver_call_duration_seconds",
		"Latency of provider driver calls by provider and kind.", driverBuckets, "provider", "kind")
	m.probeBatch = histogram("forkgraph_driver_probe_batch_size",
		"Turns asked about in one forkability probe call, by provider.", batchBuckets, "provider")
	m.loaderBatch = histogram("forkgraph_dataloader_batch_size",
		"Keys read by one dataloader batch, by loader.", batchBuckets, "loader")
	m.txDuration = histogram("forkgraph_store_transaction_duration_seconds",
		"Latency of store write transactions, by outcome (commit or rollback).", txBuckets, "outcome")
	m.leaseClaims = counter("forkgraph_fork_lease_claims_total",
		"Fork operations this instance leased, by claim: startup (recovery), takeover (an expired lease, its instance dead or stalled) or reconcile (an unknown delivery due for an attempt).",
		"claim")
	m.leaseRenewals = counter("forkgraph_fork_lease_renewals_total",
		"Fork leases this instance asked to renew, by result: renewed, or lost (another instance took the fork over, or it finished meanwhile).",
		"result")
	buildInfo := gauge("forkgraph_build_info", "Always 1; the labels describe the running binary.",
		"version", "commit", "goversion")
	buildInfo.WithLabelValues(build.Version, build.Commit, build.GoVersion).Set(1)
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.registerCredentials()
	m.seedFixed()
	return m
}

// Names returns the names of the forkgraph_* metric families, those with no series yet (a
// labelled family appears in a scrape only once something was counted) included. The pool
// metrics are among them only after WatchPool.
func (m *Metrics) Names() []string { return append([]string(nil), m.names...) }
