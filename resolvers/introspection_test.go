package resolvers_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// standardIntrospection has the shape tools send (graphql-js getIntrospectionQuery, Apollo,
// GraphiQL, codegen): a type-reference chain nine levels deep, 15 fields in all. It must pass the
// depth limit, which is 12 for ordinary selections.
const standardIntrospection = `query IntrospectionQuery {
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

func TestIntrospectionLimits(t *testing.T) {
	api := newTestAPI(t, apiOptions{})

	t.Run("OK: the standard introspection query passes the depth limit", func(t *testing.T) {
		var resp struct {
			Schema struct {
				QueryType struct{ Name string }
				Types     []struct{ Name string }
			} `json:"__schema"`
		}
		api.mustDo(standardIntrospection, &resp, nil)
		require.Equal(t, "Query", resp.Schema.QueryType.Name)
		names := make([]string, 0, len(resp.Schema.Types))
		for _, ty := range resp.Schema.Types {
			names = append(names, ty.Name)
		}
		require.Contains(t, names, "ForkOperation")
	})

	t.Run("ErrIntrospectionReentersMembers: fields inside fields is refused", func(t *testing.T) {
		e := api.with(t).expectCode("COMPLEXITY_LIMIT_EXCEEDED",
			`{ __schema { types { fields { type { fields { type { name } } } } } } }`, nil)
		require.Equal(t, "introspection_limit", e.Extensions["reason"])
		require.True(t, strings.Contains(e.Message, `"fields"`), e.Message)
	})

	t.Run("ErrIntrospectionTooDeep: an endless ofType chain is refused", func(t *testing.T) {
		q := `{ __type(name: "Session") { ` + strings.Repeat("ofType { ", 30) + "name" + strings.Repeat(" }", 30) + " } }"
		e := api.with(t).expectCode("COMPLEXITY_LIMIT_EXCEEDED", q, nil)
		require.Equal(t, "introspection_limit", e.Extensions["reason"])
	})

	t.Run("ErrDepthLimit: ordinary fields beside introspection still count", func(t *testing.T) {
		e := api.with(t).expectCode("COMPLEXITY_LIMIT_EXCEEDED", `{ __typename session(workspaceId: "w", id: "s") {
			forks { targetSession { forks { targetSession { forks { targetSession { forks { targetSession {
			forks { targetSession { forks { targetSession { id } } } } } } } } } } } } } }`, nil)
		require.Equal(t, "depth_limit", e.Extensions["reason"])
	})
}
