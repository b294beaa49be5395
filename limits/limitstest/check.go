// Package limitstest holds what tests of document limits share: the documents of issue 10's attack
// campaign, the standard introspection query, and a check of a document bounded in time.
package limitstest

import (
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/forkgraph/forkgraph/limits"
)

// CheckBound is how long a check of the documents below may take. The walk is linear in the
// document (each fragment measured once, its cost memoized), so microseconds to milliseconds;
// one that expands a fragment bomb instead (issue 21's mutant: the memo not read) takes 2^n
// steps, and without a bound ran until the test binary's timeout, ten minutes on.
const CheckBound = 10 * time.Second

// Check is limits.CheckDocument, failing the test when the check is not done within
// CheckBound. (A walk that overruns goes on in its goroutine until the test binary ends.)
func Check(t testing.TB, query string, doc limits.Document) *gqlerror.Error {
	t.Helper()
	done := make(chan *gqlerror.Error, 1)
	go func() { done <- limits.CheckDocument(query, doc) }()
	select {
	case err := <-done:
		return err
	case <-time.After(CheckBound):
		t.Fatalf("checking a %d-byte document took over %v: the cost walk is not linear in the document "+
			"(is each fragment measured once?)", len(query), CheckBound)
		return nil
	}
}

// StandardIntrospection has the shape tools send (graphql-js getIntrospectionQuery, Apollo,
// GraphiQL, codegen): a type-reference chain nine levels deep, 15 fields in all. It must pass the
// depth limit, which is 12 for ordinary selections.
const StandardIntrospection = `query IntrospectionQuery {
  __schema {
    queryType { name } mutationType { name } subscriptionType { name }
    types { ...FullType }
    directives { name description locations args { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type {
  kind name
  ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name
    ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } } }
}`
