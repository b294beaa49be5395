package access

import (
	"fmt"
	"net/http"
)

// MaxHeaderBytes is the documented bound of a request's line and headers (docs/security.md).
// The server lets net/http read up to ServerMaxHeaderBytes, so that LimitHeaders, not net/http,
// refuses a request between the two: with a JSON body and a code, after reading the request
// whole, where net/http answers in plain text and hangs up on a client that may still be
// writing. Beyond ServerMaxHeaderBytes net/http's own answer is given its code by
// CodeNetHTTPErrors.
const (
	MaxHeaderBytes       = 64 << 10
	ServerMaxHeaderBytes = 2 * MaxHeaderBytes
)

// LimitHeaders refuses a request whose line and headers are larger than maxBytes with 431
// REQUEST_HEADERS_TOO_LARGE.
func LimitHeaders(maxBytes int, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if headerBytes(r) > maxBytes {
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusRequestHeaderFieldsTooLarge, &Error{Code: CodeHeadersTooLarge,
				Message: fmt.Sprintf("the request line and headers are larger than %d bytes", maxBytes)})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// headerBytes is the size of r's request line and headers as they came on the wire (a space
// after each header's colon; net/http's own count, MaxHeaderBytes, includes the same bytes).
func headerBytes(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2
	if r.Host != "" && r.Header.Get("Host") == "" { // net/http moves Host out of the map
		n += len("Host: ") + len(r.Host) + 2
	}
	for name, values := range r.Header {
		for _, v := range values {
			n += len(name) + 2 + len(v) + 2
		}
	}
	return n + 2
}
