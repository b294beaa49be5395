package telemetry

import (
	"context"
	"sync"
	"sync/atomic"
)

// record is what the HTTP middleware logs for one request, filled in by the GraphQL extension:
// the operation it ran and its outcome. A websocket's request lives as long as the connection;
// its operations are logged one line each, and the record only counts them.
type record struct {
	requestID  string
	websocket  bool
	operations atomic.Int64

	mu        sync.Mutex
	opType    string
	operation string
	outcome   string
	subject   string
}

type recordKey struct{}

func withRecord(ctx context.Context, r *record) context.Context {
	return context.WithValue(ctx, recordKey{}, r)
}

func recordFrom(ctx context.Context) *record {
	r, _ := ctx.Value(recordKey{}).(*record)
	return r
}

func (r *record) setOperation(opType, operation, outcome, subject string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.opType, r.operation, r.outcome, r.subject = opType, operation, outcome, subject
}

func (r *record) operationAttrs() []any {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.operation == "" {
		return nil
	}
	attrs := []any{"operation", r.operation, "type", r.opType, "outcome", r.outcome}
	if r.subject != "" {
		attrs = append(attrs, "subject", r.subject)
	}
	return attrs
}
