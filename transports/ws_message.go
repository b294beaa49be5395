package transports

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/forkgraph/forkgraph/streamside"
)

// Close codes this transport sends. The 44xx codes are graphql-transport-ws's own.
const (
	CloseBadRequest     = 4400 // invalid JSON, unknown type or malformed message
	CloseUnauthorized   = 4401 // subscribe before connection_ack
	CloseForbidden      = 4403 // InitFunc rejected connection_init
	CloseInitTimeout    = 4408 // no connection_init within InitTimeout
	CloseDuplicateID    = 4409 // subscribe with the id of a running operation
	CloseTooManyInits   = 4429 // a second connection_init
	CloseInternalError  = 4500 // the server failed (a panic, an unencodable result)
	CloseTryAgainLater  = 1013 // the outgoing queue overflowed: the client reads too slowly
	maxCloseReasonBytes = 123  // a close frame's payload is at most 125 bytes, 2 of them the code
)

// inbound is a client message before validation; raw fields keep their JSON types checkable.
type inbound struct {
	ID      json.RawMessage `json:"id"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// outbound is a server message.
type outbound struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// subscribePayload is the payload of subscribe (and legacy start), fields still raw.
type subscribePayload struct {
	Query         json.RawMessage `json:"query"`
	OperationName json.RawMessage `json:"operationName"`
	Variables     json.RawMessage `json:"variables"`
	Extensions    json.RawMessage `json:"extensions"`
	DocumentID    json.RawMessage `json:"documentId"`
	DocID         json.RawMessage `json:"doc_id"`
}

var (
	errNotObject     = errors.New("message is not a JSON object")
	errTypeNotString = errors.New(`message "type" is not a string`)
)

// decodeInbound reads a client message. Its errors are the protocol's own sentences, sent to the
// client as they are: never encoding/json's, which name Go types and change with Go versions.
func decodeInbound(data []byte) (inbound, error) {
	var msg inbound
	if !isJSONObject(data) {
		return msg, errNotObject
	}
	if err := json.Unmarshal(data, &msg); err != nil {
		// A valid object fails only on a "type" that is not a string: the other fields are raw.
		return msg, errTypeNotString
	}
	if msg.Type == "" {
		return msg, errors.New("message has no type")
	}
	return msg, nil
}

// messageID returns the message's id, which must be a non-empty string.
func messageID(msg inbound) (string, error) {
	var id string
	if len(msg.ID) == 0 || json.Unmarshal(msg.ID, &id) != nil || id == "" {
		return "", fmt.Errorf("%q message needs a non-empty string id", msg.Type)
	}
	return id, nil
}

// optionalObject decodes a payload that may be absent or null but otherwise must be an object.
func optionalObject(raw json.RawMessage) (map[string]any, error) {
	if isAbsent(raw) {
		return nil, nil
	}
	if !isJSONObject(raw) {
		return nil, errNotObject
	}
	var m map[string]any
	if err := decodeNumbers(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// decodeParams validates a subscribe payload and turns it into gqlgen's request parameters.
func decodeParams(raw json.RawMessage) (*graphql.RawParams, error) {
	if !isJSONObject(raw) {
		return nil, errors.New("subscribe payload must be an object")
	}
	var p subscribePayload
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("invalid subscribe payload: %w", err)
	}
	params := &graphql.RawParams{}
	if decodeQuery(p.Query, &params.Query) != nil {
		return nil, errors.New("subscribe payload needs a string query")
	}
	if !isAbsent(p.OperationName) && json.Unmarshal(p.OperationName, &params.OperationName) != nil {
		return nil, errors.New("operationName must be a string or null")
	}
	var err error
	if params.Variables, err = optionalObject(p.Variables); err != nil {
		return nil, errors.New("variables must be an object or null")
	}
	if params.Extensions, err = optionalObject(p.Extensions); err != nil {
		return nil, errors.New("extensions must be an object or null")
	}
	if err := takeDocumentID(params, p.DocumentID, p.DocID); err != nil {
		return nil, err
	}
	if isAbsent(p.Query) && !namesDocument(params) {
		return nil, errors.New("subscribe payload needs a string query")
	}
	return params, nil
}

func decodeNumbers(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

func isAbsent(raw json.RawMessage) bool {
	trimmed := bytes.TrimSpace(raw)
	return len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null"))
}

func isJSONObject(raw []byte) bool {
	trimmed := bytes.TrimSpace(raw)
	return len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed)
}

// encodeMessage encodes a server message; payload is marshalled unless it is nil.
func encodeMessage(id, typ string, payload any) ([]byte, error) {
	msg := outbound{ID: id, Type: typ}
	if payload != nil {
		raw, err := json.Marshal(payload)
		if err != nil {
			return nil, fmt.Errorf("encode %s payload: %w", typ, err)
		}
		msg.Payload = raw
	}
	return json.Marshal(msg)
}

// mustEncode encodes messages whose payloads are known to be encodable.
func mustEncode(id, typ string, payload any) []byte {
	frame, err := encodeMessage(id, typ, payload)
	if err != nil {
		panic(err)
	}
	return frame
}

// errorList makes a JSON array of GraphQL errors, never null.
func errorList(errs gqlerror.List) []*gqlerror.Error {
	if errs == nil {
		return []*gqlerror.Error{}
	}
	return errs
}

// truncateCloseReason cuts reason to fit a close frame without splitting a UTF-8 sequence.
func truncateCloseReason(reason string) string {
	if len(reason) <= maxCloseReasonBytes {
		return reason
	}
	cut := maxCloseReasonBytes
	for cut > 0 && !utf8.RuneStart(reason[cut]) {
		cut--
	}
	return reason[:cut]
}

// encodeResult encodes a result message. The common case, data and nothing else, is assembled
// directly: json.Marshal would reflect over the response and compact (copy) the already encoded
// data, which costs more than the rest of the message when one event fans out to thousands of
// subscribers. The data is still validated, so a broken result stays an error (4500).
func encodeResult(id, typ string, resp *graphql.Response) ([]byte, error) {
	var prefix resultPrefix
	return prefix.encode(id, typ, resp, nil)
}

// resultPrefix is an operation's result message up to its data, encoded once for all of its
// results (its id and type do not change).
type resultPrefix []byte

// encode is encodeResult with the prefix kept. The data of a response shared by every
// subscriber of an event (side.Responded) is validated once for all of them: each subscriber's
// message is then that response's payload behind its own id.
func (p *resultPrefix) encode(id, typ string, resp *graphql.Response, side *streamside.Stream) ([]byte, error) {
	plain := len(resp.Errors) == 0 && len(resp.Extensions) == 0 && resp.Label == "" && resp.Path == nil && resp.HasNext == nil
	if !plain || len(resp.Data) == 0 || !side.ValidData(resp) {
		return encodeMessage(id, typ, resp) // also reports invalid data as an error
	}
	if *p == nil {
		quotedID, err := json.Marshal(id)
		if err != nil {
			return nil, fmt.Errorf("encode id: %w", err)
		}
		*p = fmt.Appendf(nil, `{"id":%s,"type":"%s","payload":{"data":`, quotedID, typ)
	}
	frame := make([]byte, 0, len(*p)+len(resp.Data)+2)
	frame = append(frame, *p...)
	frame = append(frame, resp.Data...)
	return append(frame, "}}"...), nil
}
