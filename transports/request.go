package transports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// DefaultMaxBodyBytes limits a POST body when MaxBodyBytes is zero.
const DefaultMaxBodyBytes = 1 << 20

// requestFailure is a request that cannot become a GraphQL operation, with the HTTP status
// that says why.
type requestFailure struct {
	status int
	errs   gqlerror.List
	header http.Header
}

func failRequest(status int, format string, args ...any) *requestFailure {
	return &requestFailure{status: status, errs: gqlerror.List{codedf(statusCodes[status], format, args...)}}
}

func maxBody(n int64) int64 {
	if n <= 0 {
		return DefaultMaxBodyBytes
	}
	return n
}

// readParams reads a GraphQL request from a GET's query string or a POST's JSON body. Failures:
// 400 (malformed or invalid parameters), 405 (another method), 413 (body over limit), 415 (a
// POST that is not application/json in UTF-8).
func readParams(r *http.Request, limit int64) (*graphql.RawParams, *requestFailure) {
	switch r.Method {
	case http.MethodGet:
		return paramsFromQuery(r)
	case http.MethodPost:
		return paramsFromBody(r, limit)
	default:
		f := failRequest(http.StatusMethodNotAllowed, "method %s is not allowed; use GET or POST", r.Method)
		f.header = http.Header{"Allow": {"GET, POST"}}
		return nil, f
	}
}

func paramsFromQuery(r *http.Request) (*graphql.RawParams, *requestFailure) {
	q := r.URL.Query()
	params := &graphql.RawParams{Query: q.Get("query"), OperationName: q.Get("operationName")}
	for _, field := range []struct {
		name string
		dst  *map[string]any
	}{{"variables", &params.Variables}, {"extensions", &params.Extensions}} {
		raw := q.Get(field.name)
		if raw == "" {
			continue
		}
		m, err := optionalObject(json.RawMessage(raw))
		if err != nil {
			return nil, failRequest(http.StatusBadRequest, "the %s parameter must be a JSON object", field.name)
		}
		*field.dst = m
	}
	id, _ := json.Marshal(q.Get("documentId"))
	if !q.Has("documentId") {
		id = nil
	}
	if err := takeDocumentID(params, id, nil); err != nil {
		return nil, failRequest(http.StatusBadRequest, "%v", err)
	}
	if !q.Has("query") && !namesDocument(params) {
		return nil, failRequest(http.StatusBadRequest, "the query parameter is missing")
	}
	return params, nil
}

func paramsFromBody(r *http.Request, limit int64) (*graphql.RawParams, *requestFailure) {
	if f := checkContentType(r.Header.Get("Content-Type")); f != nil {
		return nil, f
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, limit))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, failRequest(http.StatusRequestEntityTooLarge, "the request body is larger than %d bytes", limit)
	case err != nil:
		return nil, failRequest(http.StatusBadRequest, "read the request body: %v", err)
	case len(strings.TrimSpace(string(body))) == 0:
		return nil, failRequest(http.StatusBadRequest, "the request body is empty")
	case !json.Valid(body):
		return nil, failRequest(http.StatusBadRequest, "the request body is not valid JSON")
	}
	params, err := decodeBodyParams(body)
	if err != nil {
		return nil, failRequest(http.StatusBadRequest, "%v", err)
	}
	return params, nil
}

// checkContentType accepts application/json with no charset or UTF-8.
func checkContentType(header string) *requestFailure {
	mediaType, mediaParams, err := mime.ParseMediaType(header)
	if header == "" || err != nil || mediaType != "application/json" {
		f := failRequest(http.StatusUnsupportedMediaType,
			"unsupported Content-Type %q: send application/json", header)
		f.header = http.Header{"Accept-Post": {"application/json"}}
		return f
	}
	if cs, ok := mediaParams["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return failRequest(http.StatusUnsupportedMediaType, "unsupported charset %q: send utf-8", cs)
	}
	return nil
}

// decodeBodyParams checks the JSON types of a request body's parameters.
func decodeBodyParams(body []byte) (*graphql.RawParams, error) {
	if !isJSONObject(body) {
		return nil, errors.New("the request body must be a JSON object")
	}
	var p subscribePayload
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("the request body is not a GraphQL request: %w", err)
	}
	params := &graphql.RawParams{}
	if err := decodeQuery(p.Query, &params.Query); err != nil {
		return nil, err
	}
	if !isAbsent(p.OperationName) && json.Unmarshal(p.OperationName, &params.OperationName) != nil {
		return nil, errors.New("the operationName parameter must be a string or null")
	}
	var err error
	if params.Variables, err = optionalObject(p.Variables); err != nil {
		return nil, errors.New("the variables parameter must be an object or null")
	}
	if params.Extensions, err = optionalObject(p.Extensions); err != nil {
		return nil, errors.New("the extensions parameter must be an object or null")
	}
	if err := takeDocumentID(params, p.DocumentID, p.DocID); err != nil {
		return nil, err
	}
	if isAbsent(p.Query) && !namesDocument(params) {
		return nil, errQueryMissing
	}
	return params, nil
}

// writeJSONErrors answers with a GraphQL response holding only errors (no data entry).
func writeJSONErrors(w http.ResponseWriter, contentType string, status int, errs gqlerror.List, header http.Header) {
	for k, v := range header {
		w.Header()[k] = v
	}
	writeResult(w, contentType, status, &result{Errors: errs})
}

// writeMutationOverGET answers 405: mutations change state, and GET must stay safe.
func writeMutationOverGET(w http.ResponseWriter, contentType string) {
	writeJSONErrors(w, contentType, http.StatusMethodNotAllowed,
		gqlerror.List{codedf(CodeMethodNotAllowed, "mutations cannot be sent with GET; use POST")},
		http.Header{"Allow": {"POST"}})
}

// result is a GraphQL response whose data entry is left out when absent (request errors), as
// application/graphql-response+json requires, and kept when null (execution errors).
type result struct {
	Errors     gqlerror.List   `json:"errors,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
	Extensions map[string]any  `json:"extensions,omitempty"`
}

func writeResult(w http.ResponseWriter, contentType string, status int, res *result) {
	body, err := encodeHTTPResult(res)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"errors":[{"message":"internal server error: unencodable response","extensions":{"code":"INTERNAL_SERVER_ERROR"}}]}`)
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// encodeHTTPResult is json.Marshal(res), except that a response of data alone, the common case,
// is assembled around gqlgen's bytes as they are (as encodeResult does for websocket messages):
// json.Marshal compacts and HTML-escapes a RawMessage into a copy, 3 % of a 100-row list query's
// CPU for bytes gqlgen has just written compact. The data is still validated, so a broken result
// stays a 500. ("<", ">" and "&" in strings now reach the client as they are, not as \u003c...:
// the same JSON value.)
func encodeHTTPResult(res *result) ([]byte, error) {
	if len(res.Errors) > 0 || len(res.Extensions) > 0 || len(res.Data) == 0 || !json.Valid(res.Data) {
		return json.Marshal(res)
	}
	const prefix, suffix = `{"data":`, `}`
	body := make([]byte, 0, len(prefix)+len(res.Data)+len(suffix))
	body = append(append(append(body, prefix...), res.Data...), suffix...)
	return body, nil
}
