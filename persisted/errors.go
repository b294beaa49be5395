package persisted

import "github.com/vektah/gqlparser/v2/gqlerror"

// Codes of the errors this package answers with.
const (
	// CodeNotFound is Apollo's: the hash is not cached; send the document with it.
	CodeNotFound = "PERSISTED_QUERY_NOT_FOUND"
	// CodeInvalid: extensions.persistedQuery is not {version: 1, sha256Hash: "<64 hex digits>"},
	// or the document sent does not have the hash sent with it.
	CodeInvalid = "PERSISTED_QUERY_INVALID"
	// CodeTrustedRequired: in trusted-documents mode, a request sent a document without naming it.
	CodeTrustedRequired = "TRUSTED_DOCUMENT_REQUIRED"
	// CodeTrustedNotFound: in trusted-documents mode, the hash is not in the manifest.
	CodeTrustedNotFound = "TRUSTED_DOCUMENT_NOT_FOUND"
)

// notFoundMessage is the message Apollo's PersistedQueryLink also recognises.
const notFoundMessage = "PersistedQueryNotFound"

func codedError(code, format string, args ...any) *gqlerror.Error {
	err := gqlerror.Errorf(format, args...)
	err.Extensions = map[string]any{"code": code}
	return err
}
