package access

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// net/http answers a request it cannot read (oversized headers, a malformed request line or
// header, a missing Host, an unknown transfer coding, another HTTP version) itself, before any
// handler runs, in plain text: "HTTP/1.1 <status>" followed by exactly netHTTPErrorHeaders and
// the status again as the body, in one write on the connection. A request whose Expect it cannot
// meet gets an empty 417 the same way, before the handler. No hook changes those answers, so
// CodeNetHTTPErrors rewrites them on the connection into the GraphQL-shaped JSON body every
// other refusal has, with a code. A handler's response never looks like them: net/http gives
// every one a Date header, and forkgraph's handlers never answer 417.
const netHTTPErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// reasons of the 400s net/http answers itself, by the text it gives them.
var netHTTPBadRequestReasons = map[string]string{
	"missing required Host header": "missing_host",
	"malformed Host header":        "malformed_host",
	"invalid header name":          "invalid_header_name",
	"invalid header value":         "invalid_header_value",
}

// CodeNetHTTPErrors wraps l so that the answers net/http writes itself on its connections carry
// a JSON body with extensions.code (and reason): 400 BAD_REQUEST (missing_host, malformed_host,
// invalid_header_name, invalid_header_value, malformed_request), 417 EXPECTATION_FAILED, 431
// REQUEST_HEADERS_TOO_LARGE, 501 NOT_IMPLEMENTED (unsupported_transfer_encoding), 505
// HTTP_VERSION_NOT_SUPPORTED.
func CodeNetHTTPErrors(l net.Listener) net.Listener { return codedListener{l} }

type codedListener struct{ net.Listener }

func (l codedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &codedConn{Conn: c}, nil
}

// codedConn is an accepted connection whose writes are checked for net/http's own answers. A
// websocket takes the connection under it (UnwrapHijacked); were it kept, a frame never starts
// with "HTTP/1.1 ".
type codedConn struct{ net.Conn }

// Write writes p, or the coded form of net/http's own answer when p is one.
func (c *codedConn) Write(p []byte) (int, error) {
	if !bytes.HasPrefix(p, []byte("HTTP/1.1 ")) {
		return c.Conn.Write(p)
	}
	coded, ok := codeNetHTTPAnswer(p)
	if !ok {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(coded); err != nil {
		return 0, err
	}
	return len(p), nil
}

// UnwrapHijacked is the connection under c, for a handler that hijacks it (a websocket): net/http
// writes nothing of its own on a hijacked connection, and a reader parked in a read through c
// has a stack frame more (transports' hijackUnwrapper says why that matters).
func (c *codedConn) UnwrapHijacked() net.Conn { return c.Conn }

// CloseWrite half-closes the connection, as net/http does after its 431 so that the client
// reads the answer before the connection goes.
func (c *codedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// codeNetHTTPAnswer is the coded form of p when p is one of net/http's own answers.
func codeNetHTTPAnswer(p []byte) ([]byte, bool) {
	statusLine, _, ok := bytes.Cut(p, []byte("\r\n"))
	if !ok || len(statusLine) < len("HTTP/1.1 400") {
		return nil, false
	}
	status, err := strconv.Atoi(string(statusLine[len("HTTP/1.1 ") : len("HTTP/1.1 ")+3]))
	if err != nil || status < 400 {
		return nil, false
	}
	var refusal *Error
	switch {
	case status == http.StatusExpectationFailed:
		refusal = &Error{Code: CodeExpectationFailed,
			Message: "the request's Expect header asks for something other than 100-continue"}
	case bytes.HasPrefix(p[len(statusLine):], []byte(netHTTPErrorHeaders)):
		_, text, _ := strings.Cut(string(statusLine[len("HTTP/1.1 "):]), ": ")
		refusal = netHTTPRefusal(status, text)
	default:
		return nil, false
	}
	body := errorBody(refusal)
	var out bytes.Buffer
	fmt.Fprintf(&out, "HTTP/1.1 %d %s\r\nContent-Type: application/json; charset=utf-8\r\n"+
		"Connection: close\r\nContent-Length: %d\r\n\r\n", status, http.StatusText(status), len(body))
	out.Write(body)
	return out.Bytes(), true
}

// netHTTPRefusal is the coded error of net/http's answer with status and, for a 400, its text.
func netHTTPRefusal(status int, text string) *Error {
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		return &Error{Code: CodeHeadersTooLarge,
			Message: fmt.Sprintf("the request line and headers are larger than %d bytes", ServerMaxHeaderBytes)}
	case http.StatusNotImplemented:
		return &Error{Code: CodeNotImplemented, Message: "unsupported transfer encoding",
			Extra: map[string]any{"reason": "unsupported_transfer_encoding"}}
	case http.StatusHTTPVersionNotSupported:
		return &Error{Code: CodeHTTPVersionNotSupported, Message: "unsupported HTTP version: use HTTP/1.x"}
	case http.StatusBadRequest:
		reason, ok := netHTTPBadRequestReasons[text]
		if !ok {
			reason, text = "malformed_request", "the request is not valid HTTP/1.1"
		}
		return &Error{Code: CodeBadRequest, Message: text, Extra: map[string]any{"reason": reason}}
	}
	return &Error{Code: statusCode(status), Message: strings.ToLower(http.StatusText(status))}
}
