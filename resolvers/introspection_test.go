package resolvers_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/limits/limitstest"
)

func TestIntrospectionLimits(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})

	t.Run("OK: the standard introspection query passes the depth limit", func(t *testing.T) {
		var resp struct {
			Schema struct {
				QueryType struct{ Name string }
				Types     []struct{ Name string }
			} `json:"__schema"`
		}
		api.mustDo(limitstest.StandardIntrospection, &resp, nil)
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
