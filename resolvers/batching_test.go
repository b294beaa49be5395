package resolvers_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The batching proof of SPEC §3: the statements a query runs depend on its depth, not on the
// number of rows, and every forkability probe of a response is one driver call.
const graphQuery = `query($ws: ID!, $first: Int) {
  sessions(workspaceId: $ws, first: $first) {
    edges { node {
      id
      latestTurn { id providerForkBindingAvailable messages { content } }
      forkedFrom { sourceSession { title } }
    } }
  }
}`

type graphPage struct {
	Sessions struct {
		Edges []struct {
			Node struct {
				ID         string
				LatestTurn *struct {
					ID                           string
					ProviderForkBindingAvailable bool
					Messages                     []struct{ Content string }
				}
				ForkedFrom *struct {
					SourceSession *struct{ Title string }
				}
			}
		}
	}
}

// measureGraph seeds n sessions (one turn each) plus one committed fork of the first, runs the
// graph query, and returns the SQL statements and probe calls it cost.
func measureGraph(t *testing.T, n int) (statements, probes int64) {
	api := newTestAPI(t, apiOptions{engine: noBackground})
	for i := range n {
		api.seedSession("w", fmt.Sprintf("s%03d", i), 1, "")
	}
	api.forkAndCommit("w", "s000", "s000-t1", "req-1")

	var page graphPage
	stmtsBefore, probesBefore := api.db.Statements(), api.sim.ProbeCalls()
	api.mustDo(graphQuery, &page, map[string]any{"ws": "w", "first": 200})
	statements, probes = api.db.Statements()-stmtsBefore, api.sim.ProbeCalls()-probesBefore

	requireGraphPage(t, page, n+1)
	return statements, probes
}

func TestBatching(t *testing.T) {
	t.Parallel()
	t.Run("statements do not grow with the number of sessions; one probe call", func(t *testing.T) {
		stmts10, probes10 := measureGraph(t, 10)
		stmts100, probes100 := measureGraph(t, 100)
		t.Logf("graph query: %d SQL statements and %d probe calls for 10 sessions; %d and %d for 100",
			stmts10, probes10, stmts100, probes100)
		require.Equal(t, stmts10, stmts100)
		require.Equal(t, int64(1), probes10)
		require.Equal(t, int64(1), probes100)
	})

	t.Run("no forkability field selected: no probe call", func(t *testing.T) {
		api := newTestAPI(t, apiOptions{})
		for i := range 20 {
			api.seedSession("w", fmt.Sprintf("s%02d", i), 2, "")
		}
		before := api.sim.ProbeCalls()
		var page graphPage
		api.mustDo(`query { sessions(workspaceId: "w") { edges { node { id
			latestTurn { id messages { content } } turns { edges { node { id phase } } } } } } }`, &page, nil)
		require.Len(t, page.Sessions.Edges, 20)
		require.Equal(t, before, api.sim.ProbeCalls())
	})
}

// Every other relation of a session page is batched too: turn pages (with their counts and
// messages), active turns, forks and their targets, transcripts and capabilities.
const wideQuery = `query($ws: ID!) {
  sessions(workspaceId: $ws, first: 200) { totalCount edges { node {
    turns(first: 2) { totalCount edges { node { id session { id } messages { content } } } }
    activeTurn { id }
    messages { content }
    lifecycleCapabilities { forkThroughTurn }
    forks { targetSession { title } sourceTurn { id } targetTurn { id } }
  } } }
}`

func measureWide(t *testing.T, n int) int64 {
	api := newTestAPI(t, apiOptions{engine: noBackground})
	for i := range n {
		api.seedSession("w", fmt.Sprintf("s%03d", i), 3, "")
	}
	api.forkAndCommit("w", "s000", "s000-t2", "req-1")
	api.forkAndCommit("w", "s001", "s001-t1", "req-2")
	var page struct {
		Sessions struct {
			TotalCount int
			Edges      []struct {
				Node struct {
					Turns struct {
						TotalCount int
						Edges      []struct {
							Node struct{ Messages []struct{ Content string } }
						}
					}
					Forks []struct{ TargetSession struct{ Title string } }
				}
			}
		}
	}
	before := api.db.Statements()
	api.mustDo(wideQuery, &page, map[string]any{"ws": "w"})
	statements := api.db.Statements() - before
	require.Equal(t, n+2, page.Sessions.TotalCount)
	first := page.Sessions.Edges[0].Node
	require.Equal(t, 3, first.Turns.TotalCount)
	require.Len(t, first.Turns.Edges, 2)
	require.Len(t, first.Turns.Edges[1].Node.Messages, 2)
	require.Len(t, first.Forks, 1)
	return statements
}

func TestBatchingEveryRelation(t *testing.T) {
	t.Parallel()
	wide10, wide100 := measureWide(t, 10), measureWide(t, 100)
	t.Logf("wide query: %d SQL statements for 10 sessions, %d for 100", wide10, wide100)
	require.Equal(t, wide10, wide100)
}

func measureOperations(t *testing.T, n int) int64 {
	api := newTestAPI(t, apiOptions{engine: noBackground})
	for i := range n {
		id := fmt.Sprintf("s%03d", i)
		api.seedSession("w", id, 1, "")
		_, err := api.engine.StartFork(t.Context(), forkengine.ForkInput{WorkspaceID: "w", SourceSessionID: id,
			ThroughTurnID: id + "-t1", RequestID: "r-" + id})
		require.NoError(t, err)
	}
	var page struct {
		ForkOperations struct {
			Edges []struct {
				Node struct {
					SourceSession struct{ Title string }
					ThroughTurn   struct{ ID string }
				}
			}
		}
	}
	before := api.db.Statements()
	api.mustDo(`{ forkOperations(workspaceId: "w", first: 200) { edges { node {
		phase sourceSession { title latestTurn { id } } throughTurn { id messages { content } } } } } }`, &page, nil)
	statements := api.db.Statements() - before
	require.Len(t, page.ForkOperations.Edges, n)
	require.Equal(t, "Title of s000", page.ForkOperations.Edges[0].Node.SourceSession.Title)
	require.Equal(t, turnGID("w", "s000-t1"), page.ForkOperations.Edges[0].Node.ThroughTurn.ID)
	return statements
}

func TestBatchingOperations(t *testing.T) {
	t.Parallel()
	ops10, ops100 := measureOperations(t, 10), measureOperations(t, 100)
	t.Logf("operations query: %d SQL statements for 10 operations, %d for 100", ops10, ops100)
	require.Equal(t, ops10, ops100)
}

func measureCommittedOperations(t *testing.T, n int) int64 {
	api := newTestAPI(t, apiOptions{engine: noBackground})
	for i := range n {
		id := fmt.Sprintf("s%03d", i)
		api.seedSession("w", id, 1, "")
		api.forkAndCommit("w", id, id+"-t1", "r-"+id)
	}
	var page struct {
		ForkOperations struct {
			Edges []struct {
				Node struct {
					Status  string
					Session struct{ ID, Title string }
					Lineage struct{ OperationID, TargetTurnID string }
				}
			}
		}
	}
	before := api.db.Statements()
	api.mustDo(`{ forkOperations(workspaceId: "w", first: 200) { edges { node {
		status session { id title } lineage { operationId targetTurnId } } } } }`, &page, nil)
	statements := api.db.Statements() - before
	require.Len(t, page.ForkOperations.Edges, n)
	for _, e := range page.ForkOperations.Edges {
		require.Equal(t, "COMMITTED", e.Node.Status)
		require.NotEmpty(t, e.Node.Session.ID)
		require.NotEmpty(t, e.Node.Lineage.TargetTurnID)
	}
	return statements
}

// The committed projection (ForkOperation.session and .lineage) of a page of operations is read
// in one batch, so its cost does not grow with the page.
func TestBatchingCommittedOperations(t *testing.T) {
	t.Parallel()
	ops3, ops12 := measureCommittedOperations(t, 3), measureCommittedOperations(t, 12)
	t.Logf("committed operations query: %d SQL statements for 3 operations, %d for 12", ops3, ops12)
	require.Equal(t, ops3, ops12)
}

// requireGraphPage checks a graphQuery page of edges sessions seeded by the batching tests: each
// has a forkable latest turn of two messages, and one is a fork of s000.
func requireGraphPage(t *testing.T, page graphPage, edges int) {
	t.Helper()
	require.Len(t, page.Sessions.Edges, edges)
	forked := 0
	for _, e := range page.Sessions.Edges {
		require.NotNil(t, e.Node.LatestTurn, e.Node.ID)
		require.True(t, e.Node.LatestTurn.ProviderForkBindingAvailable, e.Node.ID)
		require.Len(t, e.Node.LatestTurn.Messages, 2, e.Node.ID)
		if e.Node.ForkedFrom != nil {
			forked++
			require.Equal(t, "Title of s000", e.Node.ForkedFrom.SourceSession.Title)
		}
	}
	require.Equal(t, 1, forked)
}
