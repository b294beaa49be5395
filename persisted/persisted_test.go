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
		c.add("", h, "doc-"+h)
	}
	_, _ = c.get("", "a") // a is now the most recent
	c.add("", "d", "doc-d")
	_, hasB := c.get("", "b")
	_, hasA := c.get("", "a")
	require.False(t, hasB, "the least recently used entry goes first")
	require.True(t, hasA)
	require.Equal(t, 3, c.len())

	small := newCache(100, 64)
	small.add("", "big", strings.Repeat("x", 100))
	require.Zero(t, small.len(), "a document larger than the byte bound is not remembered")
	for i := range 10 {
		small.add("", string(rune('a'+i)), strings.Repeat("y", 20))
	}
	require.LessOrEqual(t, small.len()*21, 64, "bytes bound the cache")
}

// clientContext is the context of an operation that client runs; clientOf reads it back (the
// server wires access.ContextClientKey instead).
type clientKey struct{}

func clientContext(client string) context.Context {
	return context.WithValue(context.Background(), clientKey{}, client)
}

func clientOf(ctx context.Context) string { s, _ := ctx.Value(clientKey{}).(string); return s }

// registerAs is register for the operation of client.
func registerAs(t *testing.T, o *Operations, client string, p *graphql.RawParams) string {
	t.Helper()
	opCtx := &graphql.OperationContext{}
	ctx := graphql.WithOperationContext(clientContext(client), opCtx)
	if err := o.MutateOperationParameters(ctx, p); err != nil {
		code, _ := err.Extensions["code"].(string)
		return code
	}
	opCtx.RawQuery = p.Query
	o.InterceptOperation(ctx, func(context.Context) graphql.ResponseHandler { return nil })
	return ""
}

// Issue 21: the cache was one for every client, so a hash workspace A had run answered B with
// A's document (then FORBIDDEN), any other hash with PERSISTED_QUERY_NOT_FOUND. A hash now
// names a document only for the client that registered it, and every other client's miss is
// the same as for a hash nobody ran.
func TestAPQHashesNameDocumentsOfTheirOwnClientOnly(t *testing.T) {
	o := New(Options{APQEntries: 10, Client: clientOf})
	require.Equal(t, "", registerAs(t, o, "token:a", params(doc, pq(docHash))))
	mine := params("", pq(docHash))
	require.Equal(t, "", registerAs(t, o, "token:a", mine))
	require.Equal(t, doc, mine.Query)

	theirs := params("", pq(docHash))
	require.Equal(t, CodeNotFound, registerAs(t, o, "token:b", theirs), "another client's hash")
	require.Empty(t, theirs.Query, "nothing of the other client's document")
	nobody := params("", pq(sha256Hex("{ never }")))
	require.Equal(t, CodeNotFound, registerAs(t, o, "token:b", nobody))

	require.Equal(t, "", registerAs(t, o, "token:b", params(doc, pq(docHash))), "b registers its own")
	require.Equal(t, "", registerAs(t, o, "token:b", params("", pq(docHash))))
	require.Equal(t, 2, o.apq.len(), "one entry per client")
}

// A client that registers documents as fast as it can pushes out its own, never another's
// (issue 21: 1,100 registrations flushed everyone's 1,000): eviction takes from the client with
// the largest share of the cache, counted in entries or in bytes, whichever it holds more of.
func TestAPQFloodEvictsTheFloodersDocuments(t *testing.T) {
	for name, flood := range map[string]struct {
		n    int
		size int
	}{
		"many small documents": {1100, 10},
		"large documents":      {50, 4000},
	} {
		t.Run(name, func(t *testing.T) {
			c := newCache(1000, 64<<10)
			victims := map[string]string{}
			for i := range 20 {
				client, hash := "token:"+string(rune('a'+i)), sha256Hex(string(rune('a'+i)))
				c.add(client, hash, "{ victim }")
				victims[client] = hash
			}
			for i := range flood.n {
				d := strings.Repeat("x", flood.size) + string(rune(i))
				c.add("addr:203.0.113.7", sha256Hex(d), d)
			}
			for client, hash := range victims {
				_, ok := c.get(client, hash)
				require.True(t, ok, "%s lost its document to the flood", client)
			}
			require.LessOrEqual(t, c.len(), 1000)
			c.mu.Lock()
			require.LessOrEqual(t, c.bytes, 64<<10)
			flooder := c.clients["addr:203.0.113.7"]
			require.NotNil(t, flooder, "the flooder keeps what fits")
			require.Positive(t, flooder.order.Len())
			c.mu.Unlock()
		})
	}
}

// Evicting a client's last document forgets the client; the bounds hold throughout.
func TestAPQCacheForgetsEmptyClients(t *testing.T) {
	c := newCache(2, 1000)
	c.add("a", "h1", "{ a }")
	c.add("b", "h2", "{ b }")
	c.add("b", "h3", "{ b2 }") // b holds the most: its oldest goes
	_, ok := c.get("b", "h2")
	require.False(t, ok)
	c.add("c", "h4", "{ c }") // a, b and c hold one each: some client's only document goes
	require.Equal(t, 2, c.len())
	c.mu.Lock()
	defer c.mu.Unlock()
	require.Len(t, c.clients, 2, "a client without documents is forgotten")
	require.Len(t, c.shares.docs, 2)
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
