package access

import (
	"encoding/json"
	"net/http"
)

// Codes of refusals made at the edge, beside forkengine's (RATE_LIMITED, UNAUTHENTICATED).
const (
	CodeHostNotAllowed   = "HOST_NOT_ALLOWED"
	CodeOriginNotAllowed = "ORIGIN_NOT_ALLOWED"
)

// Error is a refusal at the edge with a stable code; its Extensions are what a GraphQL error
// carries for it (the transports copy them into extensions).
type Error struct {
	Message string
	Code    string
	Extra   map[string]any // further extensions, e.g. retryable
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Extensions returns code and the extra entries as GraphQL error extensions.
func (e *Error) Extensions() map[string]any {
	ext := map[string]any{"code": e.Code}
	for k, v := range e.Extra {
		ext[k] = v
	}
	return ext
}

// writeError answers an HTTP request with a GraphQL response holding only err.
func writeError(w http.ResponseWriter, status int, err *Error) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{
		"message": err.Message, "extensions": err.Extensions(),
	}}})
}
