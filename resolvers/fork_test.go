package resolvers_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

const forkMutation = `mutation($source: ID!, $through: ID!, $req: ID!) {
  forkSession(input: {workspaceId: "w", sourceSessionId: $source, throughTurnId: $through, requestId: $req}) {
    id localId requestId sourceSessionId targetSessionId throughTurnId status phase error session { id } lineage { operationId }
  }
}`

type forkOp struct {
	ID, LocalID, RequestID, SourceSessionID, TargetSessionID, ThroughTurnID, Status, Phase string
	Error                                                                                  *string
	TargetTurnID                                                                           *string
	AcknowledgedAt                                                                         *string
	Session                                                                                *struct {
		ID    string
		Turns struct {
			Edges []struct {
				Node struct {
					ID       string
					Messages []struct{ Content string }
				}
			}
		}
	}
	Lineage *struct {
		OperationID, SourceSessionID, SourceTurnID, TargetSessionID, TargetTurnID string
		SourceTurn                                                                *struct{ ID string }
		TargetSession                                                             *struct{ ID string }
	}
}

const followSubscription = `subscription($id: ID!) { forkOperationUpdated(workspaceId: "w", id: $id) {
  id localId status phase session { id turns { edges { node { id messages { content } } } } } } }`

func TestForkLifecycle(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	api.seedSession("w", "src", 3, "")

	var started struct{ ForkSession forkOp }
	api.mustDo(forkMutation, &started, map[string]any{"source": "src", "through": "src-t2", "req": "r1"})
	op := started.ForkSession
	require.Equal(t, "ACCEPTED", op.Status)
	require.Equal(t, "FROZEN", op.Phase)
	require.Nil(t, op.Session)
	require.Nil(t, op.Lineage)
	require.NotEmpty(t, op.TargetSessionID)

	var replayed struct{ ForkSession forkOp }
	api.mustDo(forkMutation, &replayed, map[string]any{"source": "src", "through": "src-t2", "req": "r1"})
	require.Equal(t, op.ID, replayed.ForkSession.ID, "the same request id returns the same operation")

	ws := api.dialWS(nil)
	ws.subscribe("1", followSubscription, map[string]any{"id": op.ID})
	var frame struct{ ForkOperationUpdated forkOp }
	ws.nextData("1", &frame)
	require.Equal(t, "FROZEN", frame.ForkOperationUpdated.Phase, "the current state comes first")

	processed := make(chan error, 1)
	go func() {
		_, err := api.engine.ProcessOperation(context.Background(), "w", op.LocalID)
		processed <- err
	}()
	for _, phase := range []string{"DISPATCHING", "MATERIALIZING", "COMMITTED"} {
		ws.nextData("1", &frame)
		require.Equal(t, phase, frame.ForkOperationUpdated.Phase)
	}
	ws.complete("1")
	require.NoError(t, <-processed)
	require.Equal(t, "COMMITTED", frame.ForkOperationUpdated.Status)
	require.NotNil(t, frame.ForkOperationUpdated.Session)
	require.Len(t, frame.ForkOperationUpdated.Session.Turns.Edges, 2)

	var read struct{ ForkOperation forkOp }
	api.mustDo(`query($id: ID!) { forkOperation(workspaceId: "w", id: $id) { id status phase targetTurnId
		session { id turns { edges { node { id messages { content } } } } }
		lineage { operationId sourceSessionId sourceTurnId targetSessionId targetTurnId sourceTurn { id } targetSession { id } } } }`,
		&read, map[string]any{"id": op.ID})
	committed := read.ForkOperation
	require.Equal(t, "COMMITTED", committed.Phase)
	require.Equal(t, sessionGID("w", op.TargetSessionID), committed.Session.ID)
	turns := committed.Session.Turns.Edges
	require.Len(t, turns, 2)
	require.Equal(t, "question src-t1", turns[0].Node.Messages[0].Content)
	require.Equal(t, "answer src-t2", turns[1].Node.Messages[1].Content)
	require.Equal(t, "src-t2", committed.Lineage.SourceTurnID)
	require.Equal(t, turnGID("w", "src-t2"), committed.Lineage.SourceTurn.ID)
	require.Equal(t, *committed.TargetTurnID, committed.Lineage.TargetTurnID)
	require.Equal(t, sessionGID("w", op.TargetSessionID), committed.Lineage.TargetSession.ID)

	var graph struct {
		Source struct {
			Forks []struct{ TargetSessionID string }
		}
		Target struct {
			Kind       string
			ForkedFrom struct {
				SourceSession struct{ ID string }
				TargetTurn    struct{ ID string }
			}
		}
	}
	api.mustDo(`query($target: ID!) { source: session(workspaceId: "w", id: "src") { forks { targetSessionId } }
		target: session(workspaceId: "w", id: $target) { kind forkedFrom { sourceSession { id } targetTurn { id } } } }`,
		&graph, map[string]any{"target": op.TargetSessionID})
	require.Equal(t, op.TargetSessionID, graph.Source.Forks[0].TargetSessionID)
	require.Equal(t, "ROOT", graph.Target.Kind)
	require.Equal(t, sessionGID("w", "src"), graph.Target.ForkedFrom.SourceSession.ID)
	require.Equal(t, turnGID("w", *committed.TargetTurnID), graph.Target.ForkedFrom.TargetTurn.ID)

	var acked, ackedAgain struct{ AcknowledgeForkOperation forkOp }
	const ack = `mutation($id: ID!) { acknowledgeForkOperation(workspaceId: "w", id: $id) { id status acknowledgedAt } }`
	api.mustDo(ack, &acked, map[string]any{"id": op.ID})
	require.NotNil(t, acked.AcknowledgeForkOperation.AcknowledgedAt)
	api.mustDo(ack, &ackedAgain, map[string]any{"id": op.ID})
	require.Equal(t, *acked.AcknowledgeForkOperation.AcknowledgedAt, *ackedAgain.AcknowledgeForkOperation.AcknowledgedAt)

	type opsPage struct {
		ForkOperations struct {
			Edges      []struct{ Node struct{ ID string } }
			TotalCount int
		}
	}
	var done, active opsPage
	api.mustDo(`{ forkOperations(workspaceId: "w", filter: {statuses: [COMMITTED], sourceSessionId: "src"}) {
		edges { node { id } } totalCount } }`, &done, nil)
	require.Equal(t, 1, done.ForkOperations.TotalCount)
	require.Equal(t, op.ID, done.ForkOperations.Edges[0].Node.ID)
	api.mustDo(`{ forkOperations(workspaceId: "w", filter: {statuses: [ACCEPTED]}) { edges { node { id } } totalCount } }`, &active, nil)
	require.Equal(t, 0, active.ForkOperations.TotalCount)
}

func TestFailedAndUnknownForksAreData(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ script, status, phase string }{
		{`{"simulated":{"fork":"rejected","error":"no thanks"}}`, "FAILED", "FAILED"},
		{`{"simulated":{"fork":"unknown"}}`, "UNKNOWN", "DELIVERY_UNKNOWN"},
	} {
		t.Run(tc.status, func(t *testing.T) {
			api := newTestAPI(t, apiOptions{engine: noBackground})
			api.seedSession("w", "src", 2, tc.script)
			var started struct{ ForkSession forkOp }
			api.mustDo(forkMutation, &started, map[string]any{"source": "src", "through": "src-t1", "req": "r1"})
			_, err := api.engine.ProcessOperation(context.Background(), "w", started.ForkSession.LocalID)
			require.NoError(t, err)

			var read struct{ ForkOperation forkOp }
			api.mustDo(`query($id: ID!) { forkOperation(workspaceId: "w", id: $id) { status phase error session { id } lineage { operationId } } }`,
				&read, map[string]any{"id": started.ForkSession.ID})
			require.Equal(t, tc.status, read.ForkOperation.Status)
			require.Equal(t, tc.phase, read.ForkOperation.Phase)
			require.NotNil(t, read.ForkOperation.Error)
			require.Nil(t, read.ForkOperation.Session)
			require.Nil(t, read.ForkOperation.Lineage)

			ws := api.dialWS(nil)
			ws.subscribe("1", followSubscription, map[string]any{"id": started.ForkSession.ID})
			var frame struct{ ForkOperationUpdated forkOp }
			ws.nextData("1", &frame)
			require.Equal(t, tc.phase, frame.ForkOperationUpdated.Phase)
			ws.complete("1")
		})
	}
}

func TestForkOperationsPagesAndDeletion(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	for _, id := range []string{"a", "b", "c"} {
		api.seedSession("w", id, 1, "")
		api.forkAndCommit("w", id, id+"-t1", "req-"+id)
	}
	type page struct {
		ForkOperations struct {
			Edges []struct {
				Node struct{ SourceSessionID string }
			}
			PageInfo struct {
				HasNextPage bool
				EndCursor   string
			}
		}
	}
	var first, second page
	const q = `query($after: String) { forkOperations(workspaceId: "w", first: 2, after: $after) {
		edges { node { sourceSessionId } } pageInfo { hasNextPage endCursor } } }`
	api.mustDo(q, &first, nil)
	require.True(t, first.ForkOperations.PageInfo.HasNextPage)
	api.mustDo(q, &second, map[string]any{"after": first.ForkOperations.PageInfo.EndCursor})
	require.False(t, second.ForkOperations.PageInfo.HasNextPage)
	var sources []string
	for _, e := range append(first.ForkOperations.Edges, second.ForkOperations.Edges...) {
		sources = append(sources, e.Node.SourceSessionID)
	}
	require.Equal(t, []string{"a", "b", "c"}, sources)

	var purged struct{ DeleteSession bool }
	api.mustDo(`mutation { deleteSession(workspaceId: "w", id: "a", purge: true) }`, &purged, nil)
	require.True(t, purged.DeleteSession)
	var after struct {
		Session        *struct{ ID string }
		ForkOperations struct{ TotalCount int }
	}
	api.mustDo(`{ session(workspaceId: "w", id: "a") { id } forkOperations(workspaceId: "w") { totalCount } }`, &after, nil)
	require.Nil(t, after.Session, "a purged session is gone")
	require.Equal(t, 2, after.ForkOperations.TotalCount, "and so are its fork operations")
	api.expectCode("NOT_FOUND", `mutation { deleteSession(workspaceId: "w", id: "a") }`, nil)
}
