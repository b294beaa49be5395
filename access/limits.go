package access

import (
	"fmt"
	"net/http"
)

// CodeRequestTooLarge is the code of a body over the limit (the transports use the same).
const CodeRequestTooLarge = "REQUEST_TOO_LARGE"

// LimitBody refuses, before anything reads it, a request whose declared Content-Length is over
// maxBytes (413 REQUEST_TOO_LARGE), and caps the body of every other request at maxBytes, so no
// handler behind it can be made to read more, whatever its own limit.
func LimitBody(maxBytes int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > maxBytes {
			writeError(w, http.StatusRequestEntityTooLarge, &Error{Code: CodeRequestTooLarge,
				Message: fmt.Sprintf("the request body is larger than %d bytes", maxBytes)})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBytes)
		next.ServeHTTP(w, r)
	})
}
