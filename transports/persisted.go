package transports

import (
	"encoding/json"
	"errors"

	"github.com/99designs/gqlgen/graphql"
)

// documentIDExtension is where a request's top-level documentId (GraphQL over HTTP's persisted
// documents) or doc_id (Relay's examples) is handed on to the executor, in params.Extensions;
// package persisted reads it from there.
const documentIDExtension = "documentId"

var errQueryMissing = errors.New("the query parameter must be a string (or name a persisted document " +
	"with documentId or extensions.persistedQuery)")

// takeDocumentID moves a documentId or doc_id into params.Extensions. It must be a string.
func takeDocumentID(params *graphql.RawParams, documentID, docID json.RawMessage) error {
	raw := documentID
	if isAbsent(raw) {
		raw = docID
	}
	if isAbsent(raw) {
		return nil
	}
	var id string
	if json.Unmarshal(raw, &id) != nil || id == "" {
		return errors.New("documentId must be a non-empty string")
	}
	if params.Extensions == nil {
		params.Extensions = map[string]any{}
	}
	params.Extensions[documentIDExtension] = id
	return nil
}

// namesDocument reports whether a request without a query names a persisted document instead.
func namesDocument(params *graphql.RawParams) bool {
	return params.Extensions[documentIDExtension] != nil || params.Extensions["persistedQuery"] != nil
}

// decodeQuery reads an optional query string: absent or null is "", anything but a string fails.
func decodeQuery(raw json.RawMessage, dst *string) error {
	if isAbsent(raw) {
		return nil
	}
	if json.Unmarshal(raw, dst) != nil {
		return errQueryMissing
	}
	return nil
}
