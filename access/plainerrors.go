package access

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Codes of the refusals net/http and the standard handlers would answer in plain text (see
// CodeNetHTTPErrors and JSONErrors), beside the transports' own (BAD_REQUEST, NOT_FOUND,
// METHOD_NOT_ALLOWED, ...), whose names they share.
const (
	CodeBadRequest              = "BAD_REQUEST"                // 400
	CodeNotFound                = "NOT_FOUND"                  // 404
	CodeMethodNotAllowed        = "METHOD_NOT_ALLOWED"         // 405
	CodeExpectationFailed       = "EXPECTATION_FAILED"         // 417
	CodeHeadersTooLarge         = "REQUEST_HEADERS_TOO_LARGE"  // 431
	CodeNotImplemented          = "NOT_IMPLEMENTED"            // 501
	CodeHTTPVersionNotSupported = "HTTP_VERSION_NOT_SUPPORTED" // 505
)

// statusCode is the code of an HTTP error status: the constants above, else the status text in
// upper snake case (416: REQUESTED_RANGE_NOT_SATISFIABLE).
func statusCode(status int) string {
	switch status {
	case http.StatusBadRequest:
		return CodeBadRequest
	case http.StatusNotFound:
		return CodeNotFound
	case http.StatusMethodNotAllowed:
		return CodeMethodNotAllowed
	case http.StatusRequestEntityTooLarge:
		return CodeRequestTooLarge
	case http.StatusExpectationFailed:
		return CodeExpectationFailed
	case http.StatusRequestHeaderFieldsTooLarge:
		return CodeHeadersTooLarge
	case http.StatusNotImplemented:
		return CodeNotImplemented
	case http.StatusHTTPVersionNotSupported:
		return CodeHTTPVersionNotSupported
	}
	text := http.StatusText(status)
	if text == "" {
		return "HTTP_ERROR"
	}
	return strings.ToUpper(strings.NewReplacer(" ", "_", "-", "_", "'", "").Replace(text))
}

// errorBody is the GraphQL-shaped body of a refusal: one error with message and extensions.
func errorBody(err *Error) []byte {
	body, _ := json.Marshal(map[string]any{"errors": []map[string]any{{
		"message": err.Message, "extensions": err.Extensions(),
	}}})
	return append(body, '\n')
}

// JSONErrors answers every plain-text error next writes with http.Error (ServeMux's 404 and 405,
// the playground's, http.ServeContent's 416, ...) as a GraphQL-shaped JSON body with the
// status's code instead, keeping the status and the other headers (Allow). Its writer does not
// hijack: keep the websocket and SSE routes (the GraphQL endpoint, whose every answer is JSON
// already) out of it.
func JSONErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&jsonErrorWriter{ResponseWriter: w}, r)
	})
}

// jsonErrorWriter replaces the answer of http.Error, which sets exactly these two headers
// before its status, with a JSON error; anything else passes through.
type jsonErrorWriter struct {
	http.ResponseWriter
	replaced bool // the plain-text body that follows is dropped
}

// WriteHeader writes the status, with a JSON error body in place of http.Error's text.
func (w *jsonErrorWriter) WriteHeader(status int) {
	h := w.Header()
	if status < 400 || w.replaced || h.Get("Content-Type") != "text/plain; charset=utf-8" ||
		h.Get("X-Content-Type-Options") != "nosniff" {
		w.ResponseWriter.WriteHeader(status)
		return
	}
	w.replaced = true
	body := errorBody(&Error{Code: statusCode(status), Message: strings.ToLower(http.StatusText(status))})
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Del("X-Content-Type-Options")
	h.Del("Content-Length")
	w.ResponseWriter.WriteHeader(status)
	_, _ = w.ResponseWriter.Write(body)
}

// Write writes the body, unless it is the text of an error already answered in JSON.
func (w *jsonErrorWriter) Write(p []byte) (int, error) {
	if w.replaced {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the server's writer (Flush, deadlines).
func (w *jsonErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
