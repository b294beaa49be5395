package persisted

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
)

const doc = "{ __typename }"

var docHash = sha256Hex(doc)

func params(query string, ext map[string]any) *graphql.RawParams {
	return &graphql.RawParams{Query: query, Extensions: ext}
}

func pq(hash string) map[string]any {
	return map[string]any{"persistedQuery": map[string]any{"version": json.Number("1"), "sha256Hash": hash}}
}

// register runs a request through both hooks as the executor does, the second (dispatch) only
// when the first accepts it (validation and every limit are assumed to pass).
func register(t *testing.T, o *Operations, p *graphql.RawParams) string {
	t.Helper()
	opCtx := &graphql.OperationContext{}
	ctx := graphql.WithOperationContext(context.Background(), opCtx)
	if err := o.MutateOperationParameters(ctx, p); err != nil {
		code, _ := err.Extensions["code"].(string)
		return code
	}
	opCtx.RawQuery = p.Query
	o.InterceptOperation(ctx, func(context.Context) graphql.ResponseHandler { return nil })
	return ""
}

func TestAPQ(t *testing.T) {
	o := New(Options{APQEntries: 10})
	require.Equal(t, CodeNotFound, register(t, o, params("", pq(docHash))), "unknown hash")
	require.Equal(t, CodeInvalid, register(t, o, params("{ other }", pq(docHash))), "hash of another document")
	require.Equal(t, "", register(t, o, params(doc, pq(docHash))), "document with its hash")
	p := params("", pq(docHash))
	require.Equal(t, "", register(t, o, p))
	require.Equal(t, doc, p.Query, "the hash alone now names the document")
	require.Equal(t, "", register(t, o, params("{ plain }", nil)), "ad-hoc documents still run")

	for name, ext := range map[string]map[string]any{
		"not an object": {"persistedQuery": "x"},
		"version 2":     {"persistedQuery": map[string]any{"version": 2.0, "sha256Hash": docHash}},
		"no version":    {"persistedQuery": map[string]any{"sha256Hash": docHash}},
		"short hash":    pq("abc"),
		"upper hex":     pq(strings.ToUpper(docHash)),
	} {
		require.Equal(t, CodeInvalid, register(t, o, params("", ext)), name)
	}
}

// Only documents that run are remembered: the executor dispatches (InterceptOperation) only
// those.
func TestAPQRemembersOnlyValidatedDocuments(t *testing.T) {
	o := New(Options{APQEntries: 10})
	ctx := graphql.WithOperationContext(context.Background(), &graphql.OperationContext{})
	require.Nil(t, o.MutateOperationParameters(ctx, params(doc, pq(docHash))))
	// validation failed: the operation is never dispatched
	require.Equal(t, CodeNotFound, register(t, o, params("", pq(docHash))))
}

func TestAPQOff(t *testing.T) {
	o := New(Options{})
	require.Equal(t, CodeNotSupported, register(t, o, params("", pq(docHash))))
	require.Equal(t, "", register(t, o, params(doc, pq(docHash))), "a document sent with its hash just runs")
	require.Equal(t, CodeTrustedNotFound, register(t, o, params("", map[string]any{DocumentIDExtension: "x"})))
}

func TestCacheBounds(t *testing.T) {
	c := newCache(3, 1000)
	for _, h := range []string{"a", "b", "c"} {
		c.add(h, "doc-"+h)
	}
	_, _ = c.get("a") // a is now the most recent
	c.add("d", "doc-d")
	_, hasB := c.get("b")
	_, hasA := c.get("a")
	require.False(t, hasB, "the least recently used entry goes first")
	require.True(t, hasA)
	require.Equal(t, 3, c.len())

	small := newCache(100, 64)
	small.add("big", strings.Repeat("x", 100))
	require.Zero(t, small.len(), "a document larger than the byte bound is not remembered")
	for i := range 10 {
		small.add(string(rune('a'+i)), strings.Repeat("y", 20))
	}
	require.LessOrEqual(t, small.len()*21, 64, "bytes bound the cache")
}

func TestTrustedDocuments(t *testing.T) {
	m, err := ParseManifest([]byte(`{"` + docHash + `": "` + doc + `", "relay-md5-id": "query Q { __typename }"}`))
	require.NoError(t, err)
	o := New(Options{APQEntries: 10, Trusted: m})
	require.Equal(t, CodeTrustedRequired, register(t, o, params("{ adhoc }", nil)), "ad-hoc document")
	require.Equal(t, CodeTrustedNotFound, register(t, o, params("", pq(sha256Hex("{ x }")))), "unknown hash")
	require.Equal(t, CodeTrustedNotFound, register(t, o, params(doc, map[string]any{DocumentIDExtension: "nope"})))
	require.Equal(t, CodeTrustedRequired, register(t, o, params("{ other }", pq(docHash))), "a document other than the hash's")

	p := params("", pq(docHash))
	require.Equal(t, "", register(t, o, p))
	require.Equal(t, doc, p.Query)
	p = params("", map[string]any{DocumentIDExtension: "relay-md5-id"})
	require.Equal(t, "", register(t, o, p))
	require.Equal(t, "query Q { __typename }", p.Query)
	require.Equal(t, "", register(t, o, params(doc, pq(docHash))), "the trusted document sent in full")
}

func TestParseManifest(t *testing.T) {
	apollo := `{"format":"apollo-persisted-query-manifest","version":1,"operations":[{"id":"h1","body":"{ a }","name":"A","type":"query"}]}`
	m, err := ParseManifest([]byte(apollo))
	require.NoError(t, err)
	got, ok := m.Document("h1")
	require.True(t, ok)
	require.Equal(t, "{ a }", got)
	for name, bad := range map[string]string{
		"not JSON": "{", "an array": `["{ a }"]`, "empty": `{}`, "a non-string document": `{"h": 1}`,
		"an empty document": `{"h": ""}`, "apollo version 2": `{"format":"apollo-persisted-query-manifest","version":2,"operations":[]}`,
		"apollo without body": `{"format":"apollo-persisted-query-manifest","version":1,"operations":[{"id":"h"}]}`,
	} {
		_, err := ParseManifest([]byte(bad))
		require.Error(t, err, name)
	}
}
