package transports

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Codes of errors the transports raise themselves, in extensions.code, so every error a client
// receives, refused requests included, can be told apart without reading its message.
const (
	CodeBadRequest           = "BAD_REQUEST"            // 400, a malformed websocket message
	CodeNotFound             = "NOT_FOUND"              // 404, an unknown graphql-sse reservation token
	CodeMethodNotAllowed     = "METHOD_NOT_ALLOWED"     // 405
	CodeNotAcceptable        = "NOT_ACCEPTABLE"         // 406
	CodeConflict             = "CONFLICT"               // 409, a stream already open, an operation id in use
	CodeRequestTooLarge      = "REQUEST_TOO_LARGE"      // 413
	CodeUnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE" // 415
	CodeTooManyReservations  = "TOO_MANY_RESERVATIONS"  // 429, graphql-sse reservations over a bound
	CodeInternal             = "INTERNAL_SERVER_ERROR"  // 500
	CodeOperationRefused     = "OPERATION_REFUSED"      // an OperationLimiter's error without a code
	// CodeTooManySubscriptions refuses a websocket operation beyond Config.MaxSubscriptions.
	CodeTooManySubscriptions = "TOO_MANY_SUBSCRIPTIONS"
	// CodeUnavailable is not raised here but read: a response whose errors all carry it (the
	// database could not be reached, forkengine.CodeUnavailable) is answered 503.
	CodeUnavailable = "UNAVAILABLE"
)

// ReasonSubscriptionNeedsStream is the reason of the BAD_REQUEST answered to a subscription sent
// as a plain HTTP request.
const ReasonSubscriptionNeedsStream = "subscription_needs_stream"

// statusCodes names the code of each status a request failure has.
var statusCodes = map[int]string{
	http.StatusBadRequest:            CodeBadRequest,
	http.StatusNotFound:              CodeNotFound,
	http.StatusMethodNotAllowed:      CodeMethodNotAllowed,
	http.StatusConflict:              CodeConflict,
	http.StatusTooManyRequests:       CodeTooManyReservations,
	http.StatusNotAcceptable:         CodeNotAcceptable,
	http.StatusRequestEntityTooLarge: CodeRequestTooLarge,
	http.StatusUnsupportedMediaType:  CodeUnsupportedMediaType,
	http.StatusInternalServerError:   CodeInternal,
}

// codedf is a GraphQL error with extensions.code.
func codedf(code, format string, args ...any) *gqlerror.Error {
	return &gqlerror.Error{Message: fmt.Sprintf(format, args...), Extensions: map[string]any{"code": code}}
}

// extensionsCarrier is an error that knows its GraphQL extensions (access.Error).
type extensionsCarrier interface {
	error
	Extensions() map[string]any
}

// asGraphQLError keeps a *gqlerror.Error and the extensions of an error that carries them, and
// gives any other error the fallback code.
func asGraphQLError(err error, fallback string) *gqlerror.Error {
	var gqlErr *gqlerror.Error
	if errors.As(err, &gqlErr) {
		if _, ok := gqlErr.Extensions["code"]; !ok {
			copied := *gqlErr
			copied.Extensions = map[string]any{"code": fallback}
			for k, v := range gqlErr.Extensions {
				copied.Extensions[k] = v
			}
			return &copied
		}
		return gqlErr
	}
	var carrier extensionsCarrier
	if errors.As(err, &carrier) {
		return &gqlerror.Error{Message: carrier.Error(), Extensions: carrier.Extensions()}
	}
	return codedf(fallback, "%s", err.Error())
}
