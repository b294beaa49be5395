package transports

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/forkgraph/forkgraph/streamside"
)

// Incremental delivery (@defer), shared by every transport. gqlgen executes a query with @defer
// as a stream of responses: the first holds the data without the deferred fragments and
// hasNext; each later one holds one fragment's fields with the label and the path of the object
// it belongs to. Every transport sends them in the shape of the incremental delivery RFC as
// Apollo Client's Defer20220824Handler, graphql-ws and graphql-sse clients read it:
//
//	{"data": {...}, "hasNext": true}
//	{"incremental": [{"data": {...}, "path": [...], "label": "...", "errors": [...]}], "hasNext": false}
//
// gqlgen has no @stream: it is an unknown directive, refused by validation.

// Codes of the errors incremental delivery raises.
const (
	// CodeIncrementalNotAccepted (HTTP 406): a query with @defer whose Accept header does not
	// allow multipart/mixed, so its deferred fields could not be delivered.
	CodeIncrementalNotAccepted = "INCREMENTAL_DELIVERY_NOT_ACCEPTED"
	// CodeIncrementalNotSupported: @defer in a mutation or a subscription, which gqlgen's
	// executor cannot deliver (it would drop the deferred fields); reasons below.
	CodeIncrementalNotSupported = "INCREMENTAL_DELIVERY_NOT_SUPPORTED"
)

// Reasons of CodeIncrementalNotSupported.
const (
	ReasonDeferInMutation     = "defer_in_mutation"
	ReasonDeferInSubscription = "defer_in_subscription"
)

// usesDefer reports whether the operation has a @defer gqlgen will honour: on an inline fragment
// or a fragment spread that is not skipped, with `if` absent or true. Each fragment is visited
// once, so the walk is linear in the document.
func usesDefer(opCtx *graphql.OperationContext) bool {
	if opCtx == nil || opCtx.Operation == nil {
		return false
	}
	w := deferWalk{vars: opCtx.Variables, seen: map[string]bool{}}
	return w.set(opCtx.Operation.SelectionSet)
}

type deferWalk struct {
	vars map[string]any
	seen map[string]bool
}

func (w *deferWalk) set(set ast.SelectionSet) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if included(s.Directives, w.vars) && w.set(s.SelectionSet) {
				return true
			}
		case *ast.InlineFragment:
			if included(s.Directives, w.vars) && (deferActive(s.Directives, w.vars) || w.set(s.SelectionSet)) {
				return true
			}
		case *ast.FragmentSpread:
			if !included(s.Directives, w.vars) {
				continue
			}
			if deferActive(s.Directives, w.vars) {
				return true
			}
			if s.Definition != nil && !w.seen[s.Name] {
				w.seen[s.Name] = true
				if w.set(s.Definition.SelectionSet) {
					return true
				}
			}
		}
	}
	return false
}

// ifArgument is the value of a directive's `if` argument, def when absent or not a boolean.
func ifArgument(d *ast.Directive, vars map[string]any, def bool) bool {
	arg := d.Arguments.ForName("if")
	if arg == nil {
		return def
	}
	v, err := arg.Value.Value(vars)
	if err != nil {
		return def
	}
	b, ok := v.(bool)
	return ok && b
}

func included(dirs ast.DirectiveList, vars map[string]any) bool {
	if d := dirs.ForName("skip"); d != nil && ifArgument(d, vars, false) {
		return false
	}
	if d := dirs.ForName("include"); d != nil && !ifArgument(d, vars, true) {
		return false
	}
	return true
}

func deferActive(dirs ast.DirectiveList, vars map[string]any) bool {
	d := dirs.ForName("defer")
	return d != nil && ifArgument(d, vars, true)
}

// refuseDefer refuses, on every transport and before execution, @defer where gqlgen's executor
// cannot deliver it: its mutations and subscriptions send one response per result and drop the
// deferred fields (graphql-js forbids @defer on their root fields for the same reason).
// Error: CodeIncrementalNotSupported with reason defer_in_mutation or defer_in_subscription.
func refuseDefer(opCtx *graphql.OperationContext) *gqlerror.Error {
	if opCtx == nil || opCtx.Operation == nil || opCtx.Operation.Operation == ast.Query || !usesDefer(opCtx) {
		return nil
	}
	kind, reason := "mutations", ReasonDeferInMutation
	if opCtx.Operation.Operation == ast.Subscription {
		kind, reason = "subscriptions", ReasonDeferInSubscription
	}
	err := codedf(CodeIncrementalNotSupported,
		"@defer is not supported in %s: remove it or disable it with @defer(if: false); only queries are delivered incrementally", kind)
	err.Extensions["reason"] = reason
	return err
}

// initialPayload is the first payload of an incremental response.
type initialPayload struct {
	Errors     gqlerror.List   `json:"errors,omitempty"`
	Data       json.RawMessage `json:"data"`
	HasNext    bool            `json:"hasNext"`
	Extensions map[string]any  `json:"extensions,omitempty"`
}

// subsequentPayload carries deferred fragments.
type subsequentPayload struct {
	Incremental []incrementalItem `json:"incremental"`
	HasNext     bool              `json:"hasNext"`
	Extensions  map[string]any    `json:"extensions,omitempty"`
}

// incrementalItem is one deferred fragment: its fields, the path of the object they belong
// to, its label, and the errors raised while resolving it.
type incrementalItem struct {
	Errors gqlerror.List   `json:"errors,omitempty"`
	Data   json.RawMessage `json:"data"`
	Path   ast.Path        `json:"path"`
	Label  string          `json:"label,omitempty"`
}

// responses pulls an operation's results one by one and shapes them for the wire. For an
// operation without @defer it is a thin wrapper: next hands gqlgen's response on unchanged.
//
// For a query with @defer it also owns the stop. gqlgen's handler waits for a deferred result
// on a channel without watching the context, while the fragment's sender gives up when its
// context has ended: cancelled during that wait, the handler would wait forever (a goroutine
// leaked for every client that leaves). So the execution runs under a context of its own that
// the client's leaving does not cancel. When the client has left (the transport's context
// ended, or stop was called), no further resolver runs: the fragments finish with what is
// already running, the wait ends, and then the execution context is cancelled and nothing more
// is pulled, so the remaining fragments end too.
type responses struct {
	pull        graphql.ResponseHandler
	ctx         context.Context    // what DispatchOperation returned: the resolvers' streamside.Stream is in it
	side        *streamside.Stream // the operation's (nil: no resolving layer made one)
	opCtx       *graphql.OperationContext
	deferral    Deferral
	incremental bool
	pulled      int
	client      context.Context // the transport's: its end stops the operation
	left        atomic.Bool     // stop was called
	cancel      context.CancelFunc
}

// errStopped is what a resolver the stop kept from running reports; nobody receives it.
var errStopped = fmt.Errorf("the operation was stopped: its client has left: %w", context.Canceled)

// dispatch starts opCtx under ctx (which must carry opCtx, as graphql.WithOperationContext
// leaves it) and returns its responses; d leaves the deferred fields out of a query's first
// payload. The caller ends with close.
func dispatch(ctx context.Context, exec graphql.GraphExecutor, opCtx *graphql.OperationContext, d Deferral) *responses {
	r := &responses{incremental: opCtx.Operation.Operation == ast.Query && usesDefer(opCtx), client: ctx,
		opCtx: opCtx, deferral: d}
	if r.incremental {
		ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
		inner := opCtx.ResolverMiddleware
		opCtx.ResolverMiddleware = func(ctx context.Context, next graphql.Resolver) (any, error) {
			if r.stopping() {
				return nil, errStopped
			}
			return inner(ctx, next)
		}
	}
	r.pull, r.ctx = exec.DispatchOperation(ctx, opCtx)
	r.side = streamside.Of(r.ctx)
	return r
}

func (r *responses) stopping() bool { return r.left.Load() || r.client.Err() != nil }

// next returns the next payload (a *graphql.Response, or the incremental shapes above), or nil
// when the operation has ended or was stopped.
func (r *responses) next() any {
	if !r.incremental {
		resp := r.pull(r.ctx)
		if resp == nil {
			return nil
		}
		return resp
	}
	if r.stopping() {
		r.cancel()
		return nil
	}
	resp := r.pull(r.ctx)
	if resp == nil || r.stopping() {
		r.cancel()
		return nil
	}
	r.pulled++
	if r.pulled == 1 {
		return &initialPayload{Errors: resp.Errors, Data: r.deferral.firstPayload(r.opCtx, resp.Data),
			HasNext: resp.HasNext != nil && *resp.HasNext, Extensions: resp.Extensions}
	}
	return r.subsequent(resp)
}

// stop ends the operation (a write to the client failed): no further resolver runs, and next
// returns nil once the result it may be waiting for has arrived.
func (r *responses) stop() { r.left.Store(true) }

// close releases the operation once the transport is done with it (not while next runs).
func (r *responses) close() {
	if r.incremental {
		r.left.Store(true)
		r.cancel()
	}
}

// subsequent turns one of gqlgen's later responses to a query with @defer into its incremental
// payload: one deferred fragment.
func (r *responses) subsequent(resp *graphql.Response) any {
	hasNext := resp.HasNext != nil && *resp.HasNext
	path := resp.Path
	if path == nil {
		path = ast.Path{} // a fragment on the root: the path is [], never null
	}
	data := r.deferral.laterPayload(r.opCtx, path, resp.Data)
	return &subsequentPayload{
		Incremental: []incrementalItem{{Errors: resp.Errors, Data: data, Path: path, Label: resp.Label}},
		HasNext:     hasNext,
		Extensions:  resp.Extensions,
	}
}

// hasNext reports whether a payload from next announces more.
func hasNext(payload any) bool {
	switch p := payload.(type) {
	case *initialPayload:
		return p.HasNext
	case *subsequentPayload:
		return p.HasNext
	}
	return false
}

// encodePayload encodes a websocket result message for a payload of responses.next; prefix
// keeps the operation's message prefix between its results; side knows which responses are
// shared by every subscriber of an event (nil: none).
func encodePayload(prefix *resultPrefix, side *streamside.Stream, id, typ string, payload any) ([]byte, error) {
	if resp, ok := payload.(*graphql.Response); ok {
		return prefix.encode(id, typ, resp, side)
	}
	return encodeMessage(id, typ, payload)
}
