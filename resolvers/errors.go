package resolvers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/forkgraph/forkgraph/forkengine"
)

// presentError is the one error presenter. A forkengine.Error becomes its code (+ reason, +
// retryable); an access.Error keeps its extensions (code, reason, scope); errors of the GraphQL layer keep their own code (GRAPHQL_PARSE_FAILED,
// GRAPHQL_VALIDATION_FAILED, COMPLEXITY_LIMIT_EXCEEDED); an input gqlgen rejected while coercing
// it is BAD_USER_INPUT; anything else is logged with the request id and shown as
// INTERNAL_SERVER_ERROR without its details, unless unavailable says it means the database could
// not be reached: then it is the retryable UNAVAILABLE.
func presentError(logger *slog.Logger, requestID func(context.Context) string, unavailable func(error) bool) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		presented := graphql.DefaultErrorPresenter(ctx, err)
		var domain *forkengine.Error
		if errors.As(err, &domain) && domain.Code != forkengine.CodeInternal {
			logCause(ctx, logger, requestID, presented, domain, err)
			return withDomainError(presented, domain)
		}
		if unavailable != nil && unavailable(err) && !abandoned(ctx, err) {
			domain = forkengine.Unavailable(err)
			logCause(ctx, logger, requestID, presented, domain, err)
			return withDomainError(presented, domain)
		}
		var edge extensionsCarrier
		if errors.As(err, &edge) && domain == nil {
			if code, _ := edge.Extensions()["code"].(string); code != "" {
				presented.Message = edge.Error()
				presented.Extensions = edge.Extensions()
				return presented
			}
		}
		var gqlErr *gqlerror.Error
		if errors.As(err, &gqlErr) && domain == nil {
			if _, coded := gqlErr.Extensions["code"]; coded {
				return presented
			}
			if gqlErr.Unwrap() == nil { // raised by gqlgen itself while reading the input
				return withCode(presented, string(forkengine.CodeInvalid))
			}
		}
		return internalError(ctx, logger, requestID, presented, err)
	}
}

// logCause logs the cause a domain error keeps from its client: why the provider could not be
// reached or described (the driver's error names the adapter's address, which no client reads),
// or the database.
func logCause(ctx context.Context, logger *slog.Logger, requestID func(context.Context) string, presented *gqlerror.Error,
	domain *forkengine.Error, err error) {
	switch {
	case domain.Err == nil:
	case domain.Code == forkengine.CodeProviderUnavailable, domain.Code == forkengine.CodeForkUnsupported:
		logger.WarnContext(ctx, "provider error", "requestId", requestID(ctx), "code", string(domain.Code),
			"path", presented.Path.String(), "err", err)
	case domain.Code == forkengine.CodeUnavailable:
		logger.WarnContext(ctx, "database unavailable", "requestId", requestID(ctx), "path", presented.Path.String(), "err", err)
	}
}

// extensionsCarrier is an error that knows its GraphQL extensions: access.Error, the edge's
// refusals (UNAUTHENTICATED and FORBIDDEN with their reason, missing_scope with its scope).
type extensionsCarrier interface {
	error
	Extensions() map[string]any
}

func withDomainError(presented *gqlerror.Error, domain *forkengine.Error) *gqlerror.Error {
	presented.Message = domain.Message
	presented = withCode(presented, string(domain.Code))
	if domain.Reason != "" {
		presented.Extensions["reason"] = domain.Reason
	}
	if domain.Retryable || domain.Code == forkengine.CodeForkInProgress {
		presented.Extensions["retryable"] = true
	}
	return presented
}

func withCode(presented *gqlerror.Error, code string) *gqlerror.Error {
	if presented.Extensions == nil {
		presented.Extensions = map[string]any{}
	}
	presented.Extensions["code"] = code
	return presented
}

func internalError(ctx context.Context, logger *slog.Logger, requestID func(context.Context) string, presented *gqlerror.Error, err error) *gqlerror.Error {
	id := requestID(ctx)
	if abandoned(ctx, err) {
		logger.DebugContext(ctx, "operation cancelled", "requestId", id, "path", presented.Path.String())
	} else {
		logger.ErrorContext(ctx, "internal error", "requestId", id, "path", presented.Path.String(), "err", err)
	}
	presented.Message = "internal server error"
	if id != "" {
		presented.Message = fmt.Sprintf("internal server error (request id %s)", id)
	}
	presented.Extensions = map[string]any{"code": string(forkengine.CodeInternal)}
	if id != "" {
		presented.Extensions["requestId"] = id
	}
	return presented
}

// abandoned reports an error that only says the operation was cancelled: its client left,
// completed it, or the transport stopped it (a deferred fragment of a @defer query whose client
// went away). Nobody receives that error and it is no fault of the server, so it is not logged
// as an internal error.
func abandoned(ctx context.Context, err error) bool {
	return errors.Is(err, context.Canceled) || (ctx.Err() != nil && errors.Is(err, ctx.Err()))
}

// recoverPanic turns a resolver panic into an internal error; the stack goes to the log only.
func recoverPanic(logger *slog.Logger, requestID func(context.Context) string) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		logger.ErrorContext(ctx, "resolver panic", "requestId", requestID(ctx), "panic", p,
			"stack", string(debug.Stack()))
		return fmt.Errorf("panic: %v", p)
	}
}
