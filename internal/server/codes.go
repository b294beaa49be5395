package server

import (
	"github.com/99designs/gqlgen/graphql/errcode"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/limits"
	"github.com/forkgraph/forkgraph/persisted"
	"github.com/forkgraph/forkgraph/transports"
)

// errorCodes are the extensions.code values a response of this server can carry, as docs/api.md
// lists them, gathered from the packages that raise them: telemetry exports
// forkgraph_graphql_errors_total at 0 for each from the start (internal/firstrun checks the list
// against the docs).
var errorCodes = []string{
	string(forkengine.CodeInvalid), string(forkengine.CodeUnauthenticated), string(forkengine.CodeForbidden),
	string(forkengine.CodeNotFound), string(forkengine.CodeForkConflict), string(forkengine.CodeForkInProgress),
	string(forkengine.CodeForkUnsupported), string(forkengine.CodeAcknowledgeConflict), string(forkengine.CodeInternal),
	string(forkengine.CodeResumeRequired), string(forkengine.CodeRateLimited), string(forkengine.CodeProviderUnavailable),
	string(forkengine.CodeReconcileConflict), string(forkengine.CodeUnavailable),
	string(forkengine.CodeTokenExpired), string(forkengine.CodeTokenRevoked),
	errcode.ParseFailed, errcode.ValidationFailed,
	limits.CodeComplexityLimit, limits.CodeTokenLimit, limits.CodeAliasLimit, limits.CodeDirectiveLimit,
	limits.CodeRootFieldLimit,
	persisted.CodeNotFound, persisted.CodeInvalid, persisted.CodeNotSupported, persisted.CodeTrustedRequired,
	persisted.CodeTrustedNotFound,
	access.CodeHostNotAllowed, access.CodeOriginNotAllowed, access.CodeHeadersTooLarge, access.CodeExpectationFailed,
	access.CodeNotImplemented, access.CodeHTTPVersionNotSupported,
	transports.CodeBadRequest, transports.CodeMethodNotAllowed, transports.CodeNotAcceptable, transports.CodeConflict,
	transports.CodeRequestTooLarge, transports.CodeUnsupportedMediaType, transports.CodeTooManyReservations,
	transports.CodeOperationRefused, transports.CodeIncrementalNotAccepted, transports.CodeIncrementalNotSupported,
	transports.CodeTooManySubscriptions,
}
