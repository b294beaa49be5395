package resolvers_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

const reconcileFields = `id status phase error errorReason reconcileAttempts lastReconciledAt nextReconcileAt targetSessionId session { id }`

type reconcileOp struct {
	ID, Status, Phase, TargetSessionID string
	Error, ErrorReason                 *string
	ReconcileAttempts                  int
	LastReconciledAt, NextReconcileAt  *string
	Session                            *struct{ ID string }
}

// unknownFork starts a fork of a session whose script makes its delivery unknown and drives it
// there synchronously.
func (a *testAPI) unknownFork(session, script, requestID string) reconcileOp {
	a.t.Helper()
	a.seedSession("w", session, 2, `{"simulated":`+script+`}`)
	var start struct{ ForkSession struct{ LocalID string } }
	a.mustDo(`mutation($s: ID!, $t: ID!, $r: ID!) { forkSession(input: {workspaceId: "w", sourceSessionId: $s,
		throughTurnId: $t, requestId: $r}) { localId } }`, &start, map[string]any{"s": session, "t": session + "-t2", "r": requestID})
	op := a.processed(start.ForkSession.LocalID)
	require.Equal(a.t, "DELIVERY_UNKNOWN", op.Phase)
	require.NotNil(a.t, op.NextReconcileAt, "the first attempt is scheduled")
	return op
}

// processed drives the operation with local id id and reads it back.
func (a *testAPI) processed(id string) reconcileOp {
	a.t.Helper()
	_, err := a.engine.ProcessOperation(a.t.Context(), "w", id)
	require.NoError(a.t, err)
	var got struct{ ForkOperation reconcileOp }
	a.mustDo(`query($id: ID!) { forkOperation(workspaceId: "w", id: $id) { `+reconcileFields+` } }`, &got, map[string]any{"id": id})
	return got.ForkOperation
}

func (a *testAPI) reconcile(id string) reconcileOp {
	a.t.Helper()
	var got struct{ ReconcileForkOperation reconcileOp }
	a.mustDo(`mutation($id: ID!) { reconcileForkOperation(workspaceId: "w", id: $id) { `+reconcileFields+` } }`, &got, map[string]any{"id": id})
	return got.ReconcileForkOperation
}

func (a *testAPI) pendingOn(session, turn string) *struct{ ID, Phase string } {
	a.t.Helper()
	var got struct {
		Session struct {
			Turns struct {
				Edges []struct {
					Node struct {
						LocalID              string
						PendingForkOperation *struct{ ID, Phase string }
					}
				}
			}
		}
	}
	a.mustDo(`query($s: ID!) { session(workspaceId: "w", id: $s) { turns { edges { node { localId pendingForkOperation { id phase } } } } } }`,
		&got, map[string]any{"s": session})
	for _, e := range got.Session.Turns.Edges {
		if e.Node.LocalID == turn {
			return e.Node.PendingForkOperation
		}
	}
	a.t.Fatalf("turn %s not in session %s", turn, session)
	return nil
}

// An unknown delivery whose provider finds the child on the fourth attempt: the turn shows it as
// pending meanwhile, each attempt is visible, and the fourth commits it with its new session.
func TestReconcileThroughTheAPI(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	op := api.unknownFork("s", `{"fork":"unknown","reconcileAfter":3}`, "r1")
	require.Equal(t, &struct{ ID, Phase string }{op.ID, "DELIVERY_UNKNOWN"}, api.pendingOn("s", "s-t2"))
	require.Nil(t, api.pendingOn("s", "s-t1"))
	for attempt := 1; attempt <= 3; attempt++ {
		got := api.reconcile(op.ID)
		require.Equal(t, "DELIVERY_UNKNOWN", got.Phase)
		require.Equal(t, attempt, got.ReconcileAttempts)
		require.NotNil(t, got.LastReconciledAt)
		require.NotNil(t, got.NextReconcileAt)
	}
	got := api.reconcile(op.ID)
	require.Equal(t, "COMMITTED", got.Phase)
	require.Equal(t, 4, got.ReconcileAttempts)
	require.Nil(t, got.NextReconcileAt)
	require.NotNil(t, got.Session)
	require.Equal(t, sessionGID("w", op.TargetSessionID), got.Session.ID)
	require.Equal(t, got, api.reconcile(op.ID), "a resolved operation comes back as it is")
	require.Equal(t, &struct{ ID, Phase string }{op.ID, "COMMITTED"}, api.pendingOn("s", "s-t2"), "committed, not yet acknowledged")
	require.Equal(t, int64(1), api.sim.ForkCalls())

	// The new session is in the workspace's event log like any fork's.
	found := false
	for _, ev := range api.eventsOf("w") {
		found = found || (ev.Kind == forkengine.EventSessionUpserted && ev.SessionID == op.TargetSessionID)
	}
	require.True(t, found, "the reconciled commit logged the new session")
	api.expectCode("RECONCILE_CONFLICT", `mutation($id: ID!) { abandonForkOperation(workspaceId: "w", id: $id, reason: "late") { id } }`,
		map[string]any{"id": op.ID})
}

// absent fails the operation and frees the turn; so does abandon, keeping the person's reason.
func TestAbsentAndAbandonFreeTheTurn(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	absent := api.unknownFork("a", `{"fork":"unknown","reconcile":"absent"}`, "r-absent")
	got := api.reconcile(absent.ID)
	require.Equal(t, "FAILED", got.Phase)
	require.Equal(t, forkengine.ReasonReconciledAbsent, *got.ErrorReason)

	abandoned := api.unknownFork("b", `{"fork":"unknown","reconcile":"unknown"}`, "r-abandon")
	var ab struct{ AbandonForkOperation reconcileOp }
	api.mustDo(`mutation($id: ID!) { abandonForkOperation(workspaceId: "w", id: $id, reason: "support ticket 42") { `+reconcileFields+` } }`,
		&ab, map[string]any{"id": abandoned.ID})
	require.Equal(t, "FAILED", ab.AbandonForkOperation.Phase)
	require.Equal(t, forkengine.ReasonAbandoned, *ab.AbandonForkOperation.ErrorReason)
	require.Equal(t, "support ticket 42", *ab.AbandonForkOperation.Error)

	for session, old := range map[string]string{"a": absent.ID, "b": abandoned.ID} {
		require.Nil(t, api.pendingOn(session, session+"-t2"), "nothing blocks %s-t2", session)
		var again struct{ ForkSession struct{ ID string } }
		api.mustDo(`mutation($s: ID!, $t: ID!, $r: ID!) { forkSession(input: {workspaceId: "w", sourceSessionId: $s, throughTurnId: $t,
			requestId: $r}) { id } }`, &again, map[string]any{"s": session, "t": session + "-t2", "r": "fresh-" + session})
		require.NotEqual(t, old, again.ForkSession.ID, "a new request id makes a new operation on %s", session)
	}
	api.expectCode("RECONCILE_CONFLICT", `mutation($id: ID!) { reconcileForkOperation(workspaceId: "w", id: $id) { id } }`,
		map[string]any{"id": abandoned.ID})
	api.expectCode("BAD_USER_INPUT", `mutation { abandonForkOperation(workspaceId: "w", id: "x", reason: "") { id } }`, nil)
	api.expectCode("NOT_FOUND", `mutation { reconcileForkOperation(workspaceId: "other", id: "x") { id } }`, nil)
}

// A malformed simulated script is refused when the session is reported.
func TestInvalidSimulatedScriptIsRefusedOnReport(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	e := api.expectCode("BAD_USER_INPUT", `mutation { reportSession(input: {workspaceId: "w", id: "s", provider: "simulated",
		settings: {simulated: {fork: "sometimes"}}}) { id } }`, nil)
	require.Equal(t, "invalid_simulated_script", e.Extensions["reason"])
	var got struct{ Session *struct{ ID string } }
	api.mustDo(`query { session(workspaceId: "w", id: "s") { id } }`, &got, nil)
	require.Nil(t, got.Session, "nothing was stored")
}

// pendingForkOperation costs the same statements for a page of 10 sessions as for 100.
func TestPendingForkOperationIsBatched(t *testing.T) {
	t.Parallel()
	measure := func(n int) int64 {
		api := newTestAPI(t, apiOptions{engine: noBackground})
		for i := range n {
			api.seedSession("w", fmt.Sprintf("s%03d", i), 1, "")
		}
		_, err := api.engine.StartFork(t.Context(), forkengine.ForkInput{WorkspaceID: "w", SourceSessionID: "s000",
			ThroughTurnID: "s000-t1", RequestID: "pending"})
		require.NoError(t, err)
		var page struct {
			Sessions struct {
				Edges []struct {
					Node struct {
						LatestTurn struct{ PendingForkOperation *struct{ Phase string } }
					}
				}
			}
		}
		before := api.db.Statements()
		api.mustDo(`query { sessions(workspaceId: "w", first: 200) { edges { node { latestTurn { pendingForkOperation { phase } } } } } }`, &page, nil)
		statements := api.db.Statements() - before
		pending := 0
		for _, e := range page.Sessions.Edges {
			if e.Node.LatestTurn.PendingForkOperation != nil {
				pending++
				require.Equal(t, "FROZEN", e.Node.LatestTurn.PendingForkOperation.Phase)
			}
		}
		require.Equal(t, 1, pending)
		return statements
	}
	require.Equal(t, measure(10), measure(100))
}

// eventsOf returns the workspace's logged events.
func (a *testAPI) eventsOf(ws string) []forkengine.Event {
	a.t.Helper()
	events, err := a.db.EventsAfter(a.t.Context(), ws, 0, 0)
	require.NoError(a.t, err)
	return events
}
