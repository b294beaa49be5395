package telemetry

import (
	"strconv"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/transports"
)

// A labelled family has no series until something is counted with its labels, so a fresh server
// exported none of forkgraph_graphql_errors_total, forkgraph_websocket_closes_total, ...: the
// dashboard's panels said "No data" instead of 0, and a rate() alert had no first sample to
// start from. Every label combination that is known in advance is therefore exported at 0 from
// the start: the fixed sets here (protocols, close codes, statuses, claims, outcomes, HTTP
// statuses), the schema's root fields (the operation label of an anonymous operation, when the
// extension is installed), the configured providers (Drivers), the error codes (SeedErrorCodes)
// and the loaders (SeedLoaders). Operation names clients choose are not known in advance; their
// series start when they are first used.

// Label values of the fixed sets.
var (
	streamProtocols = []string{transports.SubprotocolTransportWS, transports.SubprotocolLegacyWS, transports.ProtocolSSE}
	forkStatuses    = []forkengine.OperationStatus{forkengine.StatusPrepared, forkengine.StatusDispatching,
		forkengine.StatusProviderAccepted, forkengine.StatusCommitted, forkengine.StatusFailed, forkengine.StatusUnknown}
	terminalStatuses = []forkengine.OperationStatus{forkengine.StatusCommitted, forkengine.StatusFailed, forkengine.StatusUnknown}
	// httpStatuses are the statuses /graphql answers with: GraphQL over HTTP, the websocket
	// upgrade, graphql-sse's reservations, and the edge's refusals.
	httpStatuses = []int{200, 101, 201, 202, 204, 400, 401, 403, 404, 405, 406, 409, 413, 415, 429, 500, 503}
	// driverDispositions are the disposition labels of each kind of driver call.
	driverDispositions = map[string][]string{
		kindDescribe: {"ok", "error"},
		kindProbe:    {"ok", "error"},
		kindFork: {string(forkengine.DispositionAccepted), string(forkengine.DispositionRejected),
			string(forkengine.DispositionNotStarted), string(forkengine.DispositionUnsupported),
			string(forkengine.DispositionUnknown), "error"},
		kindReconcile: {string(forkengine.ReconcileFound), string(forkengine.ReconcileAbsent),
			string(forkengine.ReconcileUnknown), "error"},
		kindRecover: {string(forkengine.RecoveryFound), string(forkengine.RecoveryAbsent),
			string(forkengine.RecoveryAmbiguous), "error"},
	}
)

// seedFixed exports the fixed label sets at 0.
func (m *Metrics) seedFixed() {
	for _, p := range streamProtocols {
		m.connections.WithLabelValues(p)
		m.connectionsOpened.WithLabelValues(p)
		m.dropped.WithLabelValues(p)
	}
	for _, label := range websocketCloseCodes {
		m.websocketCloses.WithLabelValues(label)
	}
	m.websocketCloses.WithLabelValues(otherLabel)
	for _, s := range forkStatuses {
		m.forkTransitions.WithLabelValues(string(s))
	}
	for _, s := range terminalStatuses {
		m.forkDuration.WithLabelValues(string(s))
	}
	for _, claim := range []string{"startup", "takeover", "reconcile"} {
		m.leaseClaims.WithLabelValues(claim)
	}
	for _, result := range []string{"renewed", "lost"} {
		m.leaseRenewals.WithLabelValues(result)
	}
	for _, outcome := range []string{"commit", "rollback"} {
		m.txDuration.WithLabelValues(outcome)
	}
	for _, code := range httpStatuses {
		m.httpResponses.WithLabelValues(strconv.Itoa(code))
	}
}

// seedOperations exports, for each root field of schema (the operation label of an anonymous
// operation), its request count with outcome OK, and its latency for a query or mutation, or its
// active, event and resume counts for a subscription; and the requests refused before they ran
// (operation "invalid") for the GraphQL layer's codes.
func (t *Telemetry) seedOperations(schema *ast.Schema) {
	m := t.Metrics
	for _, root := range []struct {
		typ string
		def *ast.Definition
	}{{"query", schema.Query}, {"mutation", schema.Mutation}, {"subscription", schema.Subscription}} {
		if root.def == nil {
			continue
		}
		for _, f := range root.def.Fields {
			if len(f.Name) > 1 && f.Name[:2] == "__" {
				continue // introspection
			}
			name := t.operations.value(f.Name)
			m.graphqlRequests.WithLabelValues(root.typ, name, outcomeOK)
			if root.typ == "subscription" {
				m.subscriptions.WithLabelValues(name)
				m.subscriptionSent.WithLabelValues(name)
				m.resumeRequired.WithLabelValues(name)
				continue
			}
			m.graphqlDuration.WithLabelValues(root.typ, name)
		}
	}
	for _, code := range []string{"GRAPHQL_PARSE_FAILED", "GRAPHQL_VALIDATION_FAILED"} {
		m.graphqlRequests.WithLabelValues("unknown", invalidOperation, code)
	}
}

// SeedErrorCodes exports forkgraph_graphql_errors_total at 0 for each of codes: every
// extensions.code the server's responses can carry (docs/api.md lists them).
func (t *Telemetry) SeedErrorCodes(codes []string) {
	for _, code := range codes {
		t.Metrics.graphqlErrors.WithLabelValues(t.codes.value(code))
	}
}

// SeedLoaders exports forkgraph_dataloader_batch_size for each loader name (resolvers.LoaderNames).
func (t *Telemetry) SeedLoaders(names []string) {
	for _, name := range names {
		t.Metrics.loaderBatch.WithLabelValues(name)
	}
}

// seedProvider exports the driver call families of one configured provider.
func (m *Metrics) seedProvider(provider string) {
	m.probeBatch.WithLabelValues(provider)
	for kind, dispositions := range driverDispositions {
		m.driverDuration.WithLabelValues(provider, kind)
		for _, d := range dispositions {
			m.driverCalls.WithLabelValues(provider, kind, d)
		}
	}
}
