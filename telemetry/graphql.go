package telemetry

import (
	"context"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Outcome labels beside error codes.
const (
	outcomeOK        = "OK"
	outcomeCanceled  = "CANCELED" // the operation's context ended before its (last) response
	resumeRequired   = "RESUME_REQUIRED"
	invalidOperation = "invalid" // the operation label of a request refused before it ran
)

// GraphQL returns the gqlgen extension that measures, traces and logs every operation. Install
// it outermost (resolvers.Config.Extensions), so it sees the errors that end a stream.
func (t *Telemetry) GraphQL() graphql.HandlerExtension { return graphqlExtension{t} }

type graphqlExtension struct{ t *Telemetry }

var (
	_ graphql.OperationInterceptor = graphqlExtension{}
	_ graphql.ResponseInterceptor  = graphqlExtension{}
)

// ExtensionName names the extension to gqlgen.
func (graphqlExtension) ExtensionName() string { return "forkgraph telemetry" }

// Validate accepts every schema; gqlgen calls it once, when the extension is installed, so the
// series of the schema's root fields are exported at 0 here (seed.go).
func (e graphqlExtension) Validate(schema graphql.ExecutableSchema) error {
	e.t.seedOperations(schema.Schema())
	return nil
}

// operationState is one running operation, shared by its responses.
type operationState struct {
	t         *Telemetry
	opType    string
	name      string
	start     time.Time
	span      trace.Span
	record    *record
	subject   string // who asked (Options.Subject), "" when unknown
	once      sync.Once
	subscribe bool
	events    prometheus.Counter // the subscription's forkgraph_subscription_events_total, looked up once

	mu       sync.Mutex
	lastCode string // a subscription's last error code, the outcome if its stream then just ends
}

type operationStateKey struct{}

// InterceptOperation starts the operation's span and, for a subscription, counts it as active
// until its stream ends or its context does: a client that stops a subscription never reads the
// end of its stream, and one that hangs up never gets its query's response, and each operation
// is still finished once.
func (e graphqlExtension) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	opCtx := graphql.GetOperationContext(ctx)
	st := &operationState{t: e.t, opType: operationType(opCtx), name: e.t.operations.value(operationName(opCtx)),
		start: opCtx.Stats.OperationStart, record: recordFrom(ctx), subject: e.t.subject(ctx)}
	if st.start.IsZero() {
		st.start = time.Now()
	}
	attrs := []attribute.KeyValue{attribute.String("graphql.operation.type", st.opType),
		attribute.String("graphql.operation.name", st.name)}
	if st.subject != "" {
		attrs = append(attrs, attribute.String("enduser.id", st.subject))
	}
	ctx, st.span = e.t.tracer.Start(ctx, st.opType+" "+st.name, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attrs...))
	ctx = context.WithValue(ctx, operationStateKey{}, st)
	ended := outcomeCanceled // a query or mutation whose client left before its response
	if st.opType == "subscription" {
		st.subscribe = true
		st.events = e.t.Metrics.subscriptionSent.WithLabelValues(st.name)
		e.t.Metrics.subscriptions.WithLabelValues(st.name).Inc()
		ended = outcomeOK // a client stopping its subscription is the normal end
	}
	context.AfterFunc(ctx, func() { st.finish(ended) })
	return next(ctx)
}

// InterceptResponse counts the errors of each response and finishes the operation at its
// (last) response. A response without an operation is a request refused before it ran.
func (e graphqlExtension) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	var code string
	if resp != nil {
		code = e.countErrors(resp.Errors)
	} else {
		code = e.countErrors(graphql.GetErrors(ctx)) // the errors that ended a stream
	}
	st, _ := ctx.Value(operationStateKey{}).(*operationState)
	switch {
	case st == nil:
		e.refused(ctx, code)
	case st.subscribe && resp != nil:
		st.events.Inc()
		if code != outcomeOK {
			st.mu.Lock()
			st.lastCode = code
			st.mu.Unlock()
		}
	default:
		st.finish(code)
	}
	return resp
}

// countErrors counts errs by code and returns the first code, or OK.
func (e graphqlExtension) countErrors(errs gqlerror.List) string {
	outcome := outcomeOK
	for i, err := range errs {
		code, _ := err.Extensions["code"].(string)
		if code == "" {
			code = "UNKNOWN"
		}
		code = e.t.codes.value(code)
		e.t.Metrics.graphqlErrors.WithLabelValues(code).Inc()
		if i == 0 {
			outcome = code
		}
	}
	return outcome
}

// refused records a request that failed parsing, validation or a limit before it ran.
func (e graphqlExtension) refused(ctx context.Context, code string) {
	e.t.Metrics.graphqlRequests.WithLabelValues("unknown", invalidOperation, code).Inc()
	rec := recordFrom(ctx)
	if rec != nil && !rec.websocket {
		rec.setOperation("unknown", invalidOperation, code, e.t.subject(ctx))
		return
	}
	e.t.log.Info("graphql operation", "requestId", requestIDOf(rec), "transport", transportOf(rec),
		"operation", invalidOperation, "type", "unknown", "outcome", code)
}

// finish records the operation once: its request count, latency, span status and log line.
func (st *operationState) finish(code string) {
	st.once.Do(func() {
		st.mu.Lock()
		if code == outcomeOK && st.lastCode != "" {
			code = st.lastCode
		}
		st.mu.Unlock()
		m := st.t.Metrics
		elapsed := time.Since(st.start)
		m.graphqlRequests.WithLabelValues(st.opType, st.name, code).Inc()
		if st.subscribe {
			m.subscriptions.WithLabelValues(st.name).Dec()
			if code == resumeRequired {
				m.resumeRequired.WithLabelValues(st.name).Inc()
			}
		} else {
			m.graphqlDuration.WithLabelValues(st.opType, st.name).Observe(elapsed.Seconds())
		}
		st.span.SetAttributes(attribute.String("graphql.outcome", code))
		if code != outcomeOK {
			st.span.SetStatus(codes.Error, code)
		}
		st.span.End()
		if st.record != nil && !st.record.websocket {
			st.record.setOperation(st.opType, st.name, code, st.subject)
			return
		}
		if st.record != nil {
			st.record.operations.Add(1)
		}
		attrs := []any{"requestId", requestIDOf(st.record), "transport", transportOf(st.record),
			"operation", st.name, "type", st.opType, "outcome", code, "duration", elapsed}
		if st.subject != "" {
			attrs = append(attrs, "subject", st.subject)
		}
		st.t.log.Info("graphql operation", attrs...)
	})
}

// transportOf names where an operation logged on its own line came from: a websocket, or a
// handler without the HTTP middleware.
func transportOf(r *record) string {
	if r == nil {
		return "unknown"
	}
	return "websocket"
}

func requestIDOf(r *record) string {
	if r == nil {
		return ""
	}
	return r.requestID
}

// operationType is query, mutation or subscription.
func operationType(opCtx *graphql.OperationContext) string {
	if opCtx == nil || opCtx.Operation == nil {
		return "unknown"
	}
	return string(opCtx.Operation.Operation)
}

// operationName is the operation's name or, for an anonymous operation, its first root field
// (the schema bounds those); never its variables.
func operationName(opCtx *graphql.OperationContext) string {
	if opCtx == nil || opCtx.Operation == nil {
		return invalidOperation
	}
	if opCtx.Operation.Name != "" {
		return opCtx.Operation.Name
	}
	for _, sel := range opCtx.Operation.SelectionSet {
		if f, ok := sel.(*ast.Field); ok {
			return f.Name
		}
	}
	return "anonymous"
}
