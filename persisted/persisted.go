package persisted

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// CodeNotSupported is Apollo's: APQ is off, so the client should stop sending bare hashes.
const CodeNotSupported = "PERSISTED_QUERY_NOT_SUPPORTED"

// DocumentIDExtension is the request extension the transports put a top-level documentId (or
// doc_id) into.
const DocumentIDExtension = "documentId"

// Defaults of Options.
const (
	DefaultAPQBytes = 16 << 20
)

// Options configure Operations.
type Options struct {
	// APQEntries bounds the documents remembered for automatic persisted queries; 0 turns APQ
	// off (a bare hash is then PERSISTED_QUERY_NOT_SUPPORTED).
	APQEntries int
	// APQBytes bounds the bytes of the documents remembered. Default DefaultAPQBytes.
	APQBytes int
	// Trusted, when set, is the only source of documents: trusted-documents mode.
	Trusted *Manifest
	// Client names the client an operation runs for, from its context: APQ documents are
	// remembered per client, and a hash names a document only for the client that registered
	// it. nil: every request is one client's.
	Client func(context.Context) string
}

// Operations is the gqlgen extension that resolves persisted operations. Register it with
// srv.Use before every other extension that reads the document; it remembers an APQ document
// only when the operation is dispatched, after every extension's checks, wherever those are
// registered.
type Operations struct {
	apq     *cache
	trusted *Manifest
	client  func(context.Context) string
}

// New returns the extension for opts.
func New(opts Options) *Operations {
	o := &Operations{trusted: opts.Trusted, client: opts.Client}
	if o.client == nil {
		o.client = func(context.Context) string { return "" }
	}
	if opts.APQEntries > 0 && opts.Trusted == nil {
		if opts.APQBytes <= 0 {
			opts.APQBytes = DefaultAPQBytes
		}
		o.apq = newCache(opts.APQEntries, opts.APQBytes)
	}
	return o
}

var (
	_ graphql.HandlerExtension          = (*Operations)(nil)
	_ graphql.OperationParameterMutator = (*Operations)(nil)
	_ graphql.OperationInterceptor      = (*Operations)(nil)
)

// ExtensionName names the extension for gqlgen.
func (*Operations) ExtensionName() string { return "PersistedOperations" }

// Validate accepts every schema.
func (*Operations) Validate(graphql.ExecutableSchema) error { return nil }

// statsKey holds, in the operation's stats, the registration to make once the operation runs.
const statsKey = "PersistedOperationToRegister"

// registration is a document sent with its hash, for the client that sent it.
type registration struct{ client, hash string }

// MutateOperationParameters fills in the document a request names (for APQ, one its client
// registered), or refuses the request. Errors: PERSISTED_QUERY_NOT_FOUND, PERSISTED_QUERY_NOT_SUPPORTED, PERSISTED_QUERY_INVALID,
// TRUSTED_DOCUMENT_REQUIRED, TRUSTED_DOCUMENT_NOT_FOUND.
func (o *Operations) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	hash, err := persistedQueryHash(params.Extensions)
	if err != nil {
		return err
	}
	docID, _ := params.Extensions[DocumentIDExtension].(string)
	if o.trusted != nil {
		return o.fromManifest(params, docID, hash)
	}
	switch {
	case docID != "" && params.Query == "":
		return codedError(CodeTrustedNotFound, "documentId %q names no document: this server has no trusted documents", docID)
	case hash == "":
		return nil
	case o.apq == nil && params.Query == "":
		return codedError(CodeNotSupported, "PersistedQueryNotSupported")
	case o.apq == nil:
		return nil
	case params.Query == "":
		doc, ok := o.apq.get(o.client(ctx), hash)
		if !ok {
			return codedError(CodeNotFound, notFoundMessage)
		}
		params.Query = doc
	case sha256Hex(params.Query) != hash:
		return codedError(CodeInvalid, "extensions.persistedQuery.sha256Hash is not the SHA-256 of the query sent")
	default:
		if opCtx := graphql.GetOperationContext(ctx); opCtx != nil {
			opCtx.Stats.SetExtension(statsKey, registration{client: o.client(ctx), hash: hash})
		}
	}
	return nil
}

// InterceptOperation remembers a document sent with its hash when its operation is dispatched,
// so the cache holds only documents that run. gqlgen dispatches an operation only once it has
// been parsed and validated and every operation-context check (the complexity limit, the
// introspection rule) has accepted it, whatever the order those extensions were registered in;
// a post-validation hook of this extension ran before the checks registered after it, and
// remembered documents they refused.
func (o *Operations) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if o.apq != nil {
		opCtx := graphql.GetOperationContext(ctx) // the executor dispatches with it in ctx
		if r, ok := opCtx.Stats.GetExtension(statsKey).(registration); ok {
			o.apq.add(r.client, r.hash, opCtx.RawQuery)
		}
	}
	return next(ctx)
}

func (o *Operations) fromManifest(params *graphql.RawParams, docID, hash string) *gqlerror.Error {
	id := docID
	if id == "" {
		id = hash
	}
	if id == "" {
		return codedError(CodeTrustedRequired,
			"this server runs trusted documents only: name one with documentId or extensions.persistedQuery.sha256Hash")
	}
	doc, ok := o.trusted.Document(id)
	if !ok {
		return codedError(CodeTrustedNotFound, "%q is not a trusted document of this server", id)
	}
	if params.Query != "" && params.Query != doc {
		return codedError(CodeTrustedRequired, "the query sent is not the trusted document %q", id)
	}
	params.Query = doc
	return nil
}

// persistedQueryHash reads extensions.persistedQuery, which must be {version: 1, sha256Hash:
// <64 lowercase hex digits>} when present. Errors: PERSISTED_QUERY_INVALID.
func persistedQueryHash(ext map[string]any) (string, *gqlerror.Error) {
	raw, ok := ext["persistedQuery"]
	if !ok || raw == nil {
		return "", nil
	}
	pq, ok := raw.(map[string]any)
	if !ok {
		return "", codedError(CodeInvalid, "extensions.persistedQuery must be an object")
	}
	if !isVersionOne(pq["version"]) {
		return "", codedError(CodeInvalid, "extensions.persistedQuery.version must be 1")
	}
	hash, _ := pq["sha256Hash"].(string)
	if !isSHA256Hex(hash) {
		return "", codedError(CodeInvalid, "extensions.persistedQuery.sha256Hash must be 64 lowercase hex digits")
	}
	return hash, nil
}

func isVersionOne(v any) bool {
	switch n := v.(type) {
	case json.Number:
		return n.String() == "1"
	case float64:
		return n == 1
	case int:
		return n == 1
	case int64:
		return n == 1
	}
	return false
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
