package transports

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Incremental delivery over HTTP, as the GraphQL-over-HTTP incremental delivery RFC and Apollo
// Client describe it: one multipart/mixed body whose parts are the payloads of
// incremental.go, each written and flushed as soon as gqlgen produces it.
const (
	// deferSpec is the payload shape forkgraph sends, named as Apollo Client names it.
	deferSpec = "20220824"
	// multipartBoundary is the boundary the RFC's examples and Apollo's servers use; a JSON
	// part never holds a line starting with it (JSON strings escape line breaks).
	multipartBoundary = "-"
	mediaMultipart    = `multipart/mixed; boundary="` + multipartBoundary + `"; deferSpec=` + deferSpec
	partHeader        = "\r\nContent-Type: application/json; charset=utf-8\r\n\r\n"
	// delimiter and closeDelimiter follow every part, so a client can hand a part on as soon
	// as it has arrived instead of waiting for the next one to begin.
	delimiter      = "\r\n--" + multipartBoundary
	closeDelimiter = delimiter + "--\r\n"
)

// streamIncremental answers a query with @defer as multipart/mixed. A first response without
// data (a request refused before execution) is answered as a plain response, as without
// @defer. The body ends with the close delimiter after the payload with hasNext false; a
// client that leaves stops the execution (see responses), and at server shutdown the stream,
// a query that ends by itself, is finished within the grace period like any request.
func (t HTTP) streamIncremental(w http.ResponseWriter, ctx context.Context, exec graphql.GraphExecutor,
	opCtx *graphql.OperationContext, media string) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeJSONErrors(w, media, http.StatusInternalServerError,
			gqlerror.List{codedf(CodeInternal, "streaming is not supported by this server")}, nil)
		return
	}
	rs := dispatch(ctx, exec, opCtx, t.Deferral)
	defer rs.close()
	first, _ := rs.next().(*initialPayload)
	if first == nil || first.Data == nil {
		t.writeRefused(w, media, first)
		return
	}
	w.Header().Set("Content-Type", mediaMultipart)
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	parts := multipartWriter{w: w, flush: flusher.Flush, rc: http.NewResponseController(w), logs: logs{t.Logger, t.RequestID, ctx}}
	if !parts.write(delimiter) {
		rs.stop()
		return
	}
	for payload := any(first); ; {
		more := hasNext(payload)
		if !parts.part(payload, more) {
			rs.stop()
			return
		}
		if !more {
			return
		}
		if payload = rs.next(); payload == nil {
			if ctx.Err() == nil { // ended without hasNext false: say so rather than drop fields
				parts.part(&initialPayload{Errors: gqlerror.List{codedf(CodeInternal,
					"the operation ended before all of its deferred fields were delivered")}}, false)
			}
			return
		}
	}
}

// writeRefused answers a deferred query whose first response has no data entry (an
// interceptor refused it) with that response alone, as the plain path does.
func (HTTP) writeRefused(w http.ResponseWriter, media string, first *initialPayload) {
	if first == nil {
		first = &initialPayload{Errors: gqlerror.List{codedf(CodeInternal, "the operation produced no result")}}
	}
	writeResult(w, media, requestErrorStatus(media, first.Errors), &result{Errors: first.Errors, Extensions: first.Extensions})
}

// multipartWriter writes parts; a failed write (the client left, or stopped reading for
// DefaultWriteTimeout) ends the stream.
type multipartWriter struct {
	w     http.ResponseWriter
	flush func()
	rc    *http.ResponseController
	logs  logs
}

// part writes one payload and the delimiter after it: the close delimiter when it is the last.
// A payload that cannot be encoded is replaced by an error that ends the stream (false).
func (m multipartWriter) part(payload any, more bool) bool {
	body, err := json.Marshal(payload)
	if err != nil {
		m.logs.error("transports: encode multipart part", "err", err)
		m.write(partHeader + `{"errors":[{"message":"internal server error: unencodable response","extensions":{"code":"INTERNAL_SERVER_ERROR"}}],"hasNext":false}` + closeDelimiter)
		return false
	}
	end := delimiter
	if !more {
		end = closeDelimiter
	}
	return m.write(partHeader + string(body) + end)
}

func (m multipartWriter) write(text string) bool {
	_ = m.rc.SetWriteDeadline(time.Now().Add(DefaultWriteTimeout))
	if _, err := m.w.Write([]byte(text)); err != nil {
		return false
	}
	m.flush()
	return true
}
