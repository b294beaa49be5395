package transports

import (
	"testing"

	"github.com/99designs/gqlgen/graphql"
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
