package resolvers_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/resolvers"
	"github.com/forkgraph/forkgraph/store"
)

// countingNarrow is the store's NarrowReads, counting their calls.
type countingNarrow struct {
	db                  *store.DB
	calls, lineageCalls atomic.Int64
}

func (c *countingNarrow) MessageTextsByTurnIDs(ctx context.Context, ws string, ids []string, limit int) (map[string][]forkengine.Message, error) {
	c.calls.Add(1)
	return c.db.MessageTextsByTurnIDs(ctx, ws, ids, limit)
}

func (c *countingNarrow) LineageEndsByTargetIDs(ctx context.Context, ws string, ids []string) (map[string]forkengine.Lineage, error) {
	c.lineageCalls.Add(1)
	return c.db.LineageEndsByTargetIDs(ctx, ws, ids)
}

// A response reads messages' text alone only when its whole document shows nothing else of any
// message; what it answers is the same either way.
func TestMessageTextsReadOnlyWhenOnlyTextIsShown(t *testing.T) {
	t.Parallel()
	texts := &countingNarrow{}
	api := newTestAPI(t, apiOptions{limits: func(c *resolvers.Config) { c.NarrowReads = texts }})
	texts.db = api.db
	api.seedSession("w", "s1", 2, "")
	api.seedSession("w", "s2", 1, "")

	// The answer of a full read, to compare the narrow ones with.
	const full = `query { sessions(workspaceId: "w") { edges { node {
		latestTurn { messages { id localId turnId sessionId role content createdAt } }
		messages { id localId turnId sessionId role content createdAt } } } } }`
	var whole map[string]any
	api.mustDo(full, &whole, nil)
	require.Zero(t, texts.calls.Load(), "a read of every message field used the text-only read")
	wholeJSON, err := json.Marshal(whole)
	require.NoError(t, err)
	require.Contains(t, string(wholeJSON), `"createdAt"`)
	require.Contains(t, string(wholeJSON), "question s1-t2")

	for _, c := range []struct {
		name, query string
		narrow      bool
	}{
		{"role and content of latest turns and transcripts", `query { sessions(workspaceId: "w") { edges { node {
			latestTurn { messages { __typename role content } } messages { role content } } } } }`, true},
		{"in a fragment", `query { sessions(workspaceId: "w") { edges { node { latestTurn { messages { ...Text } } } } } }
			fragment Text on Message { role content }`, true},
		{"an id beside them", `query { sessions(workspaceId: "w") { edges { node {
			latestTurn { messages { id role content } } } } } }`, false},
		{"a field in a fragment elsewhere in the document", `query { sessions(workspaceId: "w") { edges { node {
			latestTurn { messages { role content } } messages { ...When } } } } }
			fragment When on Message { createdAt }`, false},
		{"a skipped field still counts", `query { sessions(workspaceId: "w") { edges { node {
			latestTurn { messages { role content turnId @skip(if: true) } } } } } }`, false},
		{"through an interface", `query { sessions(workspaceId: "w") { edges { node {
			latestTurn { messages { role content ... on Node { id } } } } } } }`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := doCountingReads(t, api, c.query, &texts.calls, c.narrow, "text-only")
			requireSameMessages(t, whole, got)
		})
	}
}

// requireSameMessages checks that every message field got shows is whole's, session by session.
func requireSameMessages(t *testing.T, whole, got map[string]any) {
	t.Helper()
	edges := func(m map[string]any) []any {
		return m["sessions"].(map[string]any)["edges"].([]any)
	}
	wholeEdges, gotEdges := edges(whole), edges(got)
	require.Len(t, gotEdges, len(wholeEdges))
	for i := range gotEdges {
		wn, gn := wholeEdges[i].(map[string]any)["node"].(map[string]any), gotEdges[i].(map[string]any)["node"].(map[string]any)
		for _, list := range []struct{ w, g any }{
			{field(wn, "latestTurn", "messages"), field(gn, "latestTurn", "messages")},
			{wn["messages"], gn["messages"]},
		} {
			if list.g == nil {
				continue
			}
			gm, wm := list.g.([]any), list.w.([]any)
			require.Len(t, gm, len(wm))
			for j := range gm {
				for name, v := range gm[j].(map[string]any) {
					if name == "__typename" {
						require.Equal(t, "Message", v)
						continue
					}
					require.Equal(t, wm[j].(map[string]any)[name], v, "message %d field %s", j, name)
				}
			}
		}
	}
}

func field(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[p]
	}
	return v
}

// Likewise a lineage is read as its two sessions alone only when the document shows nothing else
// of any lineage.
func TestLineageEndsReadOnlyWhenOnlySessionsAreShown(t *testing.T) {
	t.Parallel()
	narrow := &countingNarrow{}
	api := newTestAPI(t, apiOptions{engine: noBackground, limits: func(c *resolvers.Config) { c.NarrowReads = narrow }})
	narrow.db = api.db
	api.seedSession("w", "s1", 2, "")
	api.forkAndCommit("w", "s1", "s1-t2", "req-1")

	const full = `query { sessions(workspaceId: "w") { edges { node { id forkedFrom {
		id operationId sourceSessionId sourceTurnId targetSessionId targetTurnId forkedAt
		sourceSession { id title } targetSession { id } sourceTurn { id } targetTurn { id } } } } } }`
	var whole map[string]any
	api.mustDo(full, &whole, nil)
	require.Zero(t, narrow.lineageCalls.Load(), "a read of every lineage field used the narrow read")
	wholeJSON, err := json.Marshal(whole)
	require.NoError(t, err)
	require.Contains(t, string(wholeJSON), `"sourceTurnId":"s1-t2"`)

	for _, c := range []struct {
		name, query string
		narrow      bool
	}{
		{"sessions and their ids", `query { sessions(workspaceId: "w") { edges { node { id forkedFrom {
			__typename sourceSessionId sourceSession { id title } targetSessionId targetSession { id } } } } } }`, true},
		{"a turn of it", `query { sessions(workspaceId: "w") { edges { node { id forkedFrom {
			sourceSessionId sourceTurn { id } } } } } }`, false},
		{"its operation in a fragment", `query { sessions(workspaceId: "w") { edges { node { id forkedFrom { ...Op } } } } }
			fragment Op on Lineage { sourceSessionId operationId }`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := doCountingReads(t, api, c.query, &narrow.lineageCalls, c.narrow, "narrow lineage")
			requireSameFields(t, whole, got, "forkedFrom")
		})
	}
}

// requireSameFields checks that every field got shows under each node's object at path is
// whole's, recursively.
func requireSameFields(t *testing.T, whole, got map[string]any, path ...string) {
	t.Helper()
	wholeEdges := whole["sessions"].(map[string]any)["edges"].([]any)
	gotEdges := got["sessions"].(map[string]any)["edges"].([]any)
	require.Len(t, gotEdges, len(wholeEdges))
	for i := range gotEdges {
		w := field(wholeEdges[i].(map[string]any)["node"].(map[string]any), path...)
		g := field(gotEdges[i].(map[string]any)["node"].(map[string]any), path...)
		requireSubset(t, w, g)
	}
}

func requireSubset(t *testing.T, whole, got any) {
	t.Helper()
	gm, ok := got.(map[string]any)
	if !ok {
		require.Equal(t, whole, got)
		return
	}
	wm, ok := whole.(map[string]any)
	require.True(t, ok, "an object where the full read has %v", whole)
	for name, v := range gm {
		if name == "__typename" {
			continue
		}
		requireSubset(t, wm[name], v)
	}
}

// doCountingReads runs query and requires that it made a read counted by calls when narrow is
// set, and none otherwise. It returns the response's data.
func doCountingReads(t *testing.T, api *testAPI, query string, calls *atomic.Int64, narrow bool, what string) map[string]any {
	t.Helper()
	before := calls.Load()
	var got map[string]any
	api.with(t).mustDo(query, &got, nil)
	if narrow {
		require.Positive(t, calls.Load()-before, "no %s read for a document that shows only what it reads", what)
	} else {
		require.Zero(t, calls.Load()-before, "a %s read for a document that shows more", what)
	}
	return got
}
