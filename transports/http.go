package transports

import (
	"context"
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/99designs/gqlgen/graphql"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// HTTP serves queries and mutations with GET and POST as the GraphQL-over-HTTP specification
// describes. Put it after Websocket and SSE: it claims every request they leave.
//
// The response media type follows Accept: application/graphql-response+json or
// application/json (also for */*, application/* or no Accept header); anything else is 406.
// Status codes (docs/transports.md has the full table):
//   - 200: a GraphQL response (with data, possibly with errors). Under application/json also
//     parse, validation and variable errors, as the specification asks for that media type;
//   - 400: malformed request (bad JSON, missing or mistyped parameters); under
//     application/graphql-response+json also parse, validation and variable errors, answered
//     without a data entry;
//   - 401 / 403: under application/graphql-response+json, a request refused before execution
//     with extensions.code UNAUTHENTICATED / FORBIDDEN;
//   - 405 (with Allow): a mutation over GET (Allow: POST), or a method other than GET/POST;
//   - 406: an Accept header naming neither JSON media type (nor multipart/mixed for a query with
//     @defer), or a query with @defer whose Accept lacks multipart/mixed
//     (INCREMENTAL_DELIVERY_NOT_ACCEPTED). A query with @defer is answered as multipart/mixed,
//     its parts streamed (http_multipart.go); @defer in a mutation or subscription is 400
//     INCREMENTAL_DELIVERY_NOT_SUPPORTED;
//   - 413: a body larger than MaxBodyBytes; 415: a POST body that is not application/json;
//   - 500: the server failed;
//   - 503 (with Retry-After): every error of the response is UNAVAILABLE, the database could not
//     be reached; the same request may work in a moment.
type HTTP struct {
	// MaxBodyBytes limits a POST body (413 beyond). Default 1 MiB.
	MaxBodyBytes int64
	// Logger receives what the transport cannot tell a client (panics, unencodable results,
	// failed writes); nil: slog.Default(). RequestID, when set, names the request each line
	// comes from (access.RequestID).
	Logger    *slog.Logger
	RequestID func(ctx context.Context) string
	// Deferral leaves the deferred fields out of a query's first payload (see Deferral).
	Deferral Deferral
}

var _ graphql.Transport = HTTP{}

// Supports claims every request that is not a websocket upgrade, so unsupported methods get a
// proper 405 instead of gqlgen's generic 400. Other Upgrade offers (curl --http2 sends h2c on
// every request) are optional for the client, so the request is served as plain HTTP.
func (HTTP) Supports(r *http.Request) bool {
	return !websocket.IsWebSocketUpgrade(r)
}

// Do reads, executes and answers one request.
func (t HTTP) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if r.Method == http.MethodOptions {
		w.Header().Set("Allow", "GET, POST, OPTIONS")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	media, ok := negotiateMedia(r.Header.Get("Accept"))
	incremental := acceptsIncremental(r.Header.Get("Accept"))
	if !ok && !incremental {
		writeJSONErrors(w, mediaJSON, http.StatusNotAcceptable, gqlerror.List{codedf(CodeNotAcceptable,
			"cannot answer with %q: accept application/graphql-response+json or application/json", r.Header.Get("Accept"))}, nil)
		return
	}
	if !ok { // multipart/mixed alone: errors, and the 406 of an operation without @defer, in JSON
		media = mediaJSON
	}
	start := graphql.Now()
	params, failure := readParams(r, maxBody(t.MaxBodyBytes))
	if failure != nil {
		writeJSONErrors(w, media, failure.status, failure.errs, failure.header)
		return
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	params.Headers = r.Header
	t.execute(w, r, exec, params, negotiated{media: media, json: ok, incremental: incremental})
}

// negotiated is what Accept allows: a JSON media type (json; media is the one chosen) and
// multipart/mixed for queries with @defer (incremental).
type negotiated struct {
	media             string
	json, incremental bool
}

func (t HTTP) execute(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, params *graphql.RawParams, accept negotiated) {
	media := accept.media
	ctx := graphql.StartOperationTrace(r.Context())
	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		resp := exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs)
		writeResult(w, media, requestErrorStatus(media, resp.Errors), &result{Errors: resp.Errors, Extensions: resp.Extensions})
		return
	}
	refused := refuseDefer(opCtx)
	switch {
	case r.Method == http.MethodGet && opCtx.Operation.Operation == ast.Mutation:
		writeMutationOverGET(w, media)
		return
	case refused != nil:
		errs := gqlerror.List{refused}
		writeResult(w, media, requestErrorStatus(media, errs), &result{Errors: errs})
		return
	case opCtx.Operation.Operation == ast.Subscription:
		err := codedf(CodeBadRequest, "subscriptions need a websocket (graphql-transport-ws) or Accept: text/event-stream")
		err.Extensions["reason"] = ReasonSubscriptionNeedsStream
		errs := gqlerror.List{err}
		writeResult(w, media, requestErrorStatus(media, errs), &result{Errors: errs})
		return
	}
	deferred := usesDefer(opCtx)
	if refusal := refuseByAccept(deferred, accept, r.Header.Get("Accept")); refusal != nil {
		writeJSONErrors(w, media, http.StatusNotAcceptable, gqlerror.List{refusal}, nil)
		return
	}
	defer func() {
		if p := recover(); p != nil {
			logs{t.Logger, t.RequestID, ctx}.error("transports: panic in HTTP operation", "panic", p, "stack", string(debug.Stack()))
			writeJSONErrors(w, media, http.StatusInternalServerError, gqlerror.List{codedf(CodeInternal, "internal server error")}, nil)
		}
	}()
	ctx = graphql.WithOperationContext(ctx, opCtx)
	if deferred {
		t.streamIncremental(w, ctx, exec, opCtx, media)
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	resp := responses(ctx)
	if resp == nil {
		resp = &graphql.Response{Errors: gqlerror.List{codedf(CodeInternal, "the operation produced no result")}}
	}
	status := http.StatusOK
	if resp.Data == nil && len(resp.Errors) > 0 {
		// No data entry: the request was refused before execution (an interceptor's error).
		status = requestErrorStatus(media, resp.Errors)
	}
	if allUnavailable(resp.Errors) {
		// Nothing the client sent is wrong; proxies, load balancers and clients' retry policies
		// read "try again" from 503 and Retry-After, not from a 200's body.
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	}
	writeResult(w, media, status, &result{Errors: resp.Errors, Data: resp.Data, Extensions: resp.Extensions})
}

// allUnavailable reports whether a response has errors and all are UNAVAILABLE.
func allUnavailable(errs gqlerror.List) bool {
	for _, err := range errs {
		if err.Extensions["code"] != CodeUnavailable {
			return false
		}
	}
	return len(errs) > 0
}

// refuseByAccept is the 406 of an operation Accept does not let forkgraph answer: a query with
// @defer without multipart/mixed (INCREMENTAL_DELIVERY_NOT_ACCEPTED: its deferred fields could
// not be delivered, and dropping them would be wrong), or one without @defer when only
// multipart/mixed is accepted (NOT_ACCEPTABLE).
func refuseByAccept(deferred bool, accept negotiated, header string) *gqlerror.Error {
	switch {
	case deferred && !accept.incremental:
		return codedf(CodeIncrementalNotAccepted,
			"this query uses @defer, whose answer is multipart/mixed: send Accept: multipart/mixed;deferSpec=%s (with application/json for other operations), or remove @defer", deferSpec)
	case !deferred && !accept.json:
		return codedf(CodeNotAcceptable,
			"cannot answer with %q: an operation without @defer is answered with application/graphql-response+json or application/json", header)
	}
	return nil
}

// requestErrorStatus is the status of a GraphQL response without data: 200 under
// application/json (its clients read errors from the body), else 400, or 401/403 when the
// errors say the request was not authenticated or not permitted.
func requestErrorStatus(media string, errs gqlerror.List) int {
	if media == mediaJSON {
		return http.StatusOK
	}
	for _, err := range errs {
		switch err.Extensions["code"] {
		case "UNAUTHENTICATED":
			return http.StatusUnauthorized
		case "FORBIDDEN":
			return http.StatusForbidden
		}
	}
	return http.StatusBadRequest
}
