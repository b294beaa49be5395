package transports

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// BenchmarkUsesDefer measures what every query now pays before it runs: one walk of its
// selections looking for an active @defer, here over a document of 200 fields in 40 fragment
// spreads (none deferred, so the walk visits everything).
func BenchmarkUsesDefer(b *testing.B) {
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: `type Query { a: String b: Query c: String d: String e: String }`})
	query := "{"
	for range 40 {
		query += " b { ...F }"
	}
	query += " } fragment F on Query { a c d e b { a } }"
	doc, errs := gqlparser.LoadQuery(schema, query)
	if errs != nil {
		b.Fatal(errs)
	}
	opCtx := &graphql.OperationContext{Operation: doc.Operations[0]}
	b.ReportAllocs()
	for b.Loop() {
		if usesDefer(opCtx) {
			b.Fatal("no @defer in the document")
		}
	}
}

// BenchmarkHTTPQueryWithoutDefer is one plain query through HTTP (the mock executor answers at
// once), to set the walk above against the whole of a request the walk is now part of; run both
// in one invocation (-bench 'UsesDefer|HTTPQuery') to compare them under the same load.
func BenchmarkHTTPQueryWithoutDefer(b *testing.B) {
	srv := handler.New(deferSchema(&deferHooks{}))
	srv.AddTransport(HTTP{})
	body := `{"query":"{ hello }"}`
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code, rec.Body.String())
		}
	}
}
