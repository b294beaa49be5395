package forkenginetest

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// providerSessionTests: a provider session belongs to the first workspace that reports it, or
// that a fork made it for. Another workspace reporting it is refused and changes nothing, cannot
// fork through it, and a provider that names it as a fork's child has given an invalid result.
func providerSessionTests() map[string]storeTest {
	return map[string]storeTest{
		"ClaimKeepsTheFirstOwner": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			claim := func(ws, provider string) (owner string) {
				update(t, s, func(ctx context.Context, tx forkengine.Tx) (err error) {
					owner, err = tx.ClaimProviderSession(ctx, forkengine.ProviderSessionClaim{Provider: provider,
						ProviderSessionID: "thread-1", WorkspaceID: ws, At: at(0)})
					return err
				})
				return owner
			}
			_, err := s.ProviderSessionOwner(ctx, "scripted", "thread-1")
			require.ErrorIs(t, err, forkengine.ErrNotFound)
			require.Equal(t, wsA, claim(wsA, "scripted"))
			require.Equal(t, wsA, claim(wsB, "scripted"), "the owner never changes")
			require.Equal(t, wsA, claim(wsA, "scripted"), "claiming it again is harmless")
			require.Equal(t, wsB, claim(wsB, "other"), "provider session ids are unique per provider")
			owner, err := s.ProviderSessionOwner(ctx, "scripted", "thread-1")
			require.NoError(t, err)
			require.Equal(t, wsA, owner)

			rolledBack := errors.New("rolled back")
			err = s.Update(ctx, func(tx forkengine.Tx) error {
				_, err := tx.ClaimProviderSession(ctx, forkengine.ProviderSessionClaim{Provider: "scripted",
					ProviderSessionID: "thread-2", WorkspaceID: wsB, At: at(1)})
				require.NoError(t, err)
				return rolledBack
			})
			require.ErrorIs(t, err, rolledBack)
			_, err = s.ProviderSessionOwner(ctx, "scripted", "thread-2")
			require.ErrorIs(t, err, forkengine.ErrNotFound, "a claim rolls back with its transaction")
		},
		"AnotherWorkspaceReportingItIsForbidden": func(t *testing.T, s forkengine.Store) {
			e := hostileEngine(t, s)
			ctx := context.Background()
			report := func(ws, id, psid string) error {
				_, err := e.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: ws, ID: id, Provider: "scripted",
					ProviderSessionID: &psid})
				return err
			}
			require.NoError(t, report(wsA, "s1", "thread-of-a"))
			require.NoError(t, report(wsA, "s2", "thread-of-a"), "the owner may report it in several sessions")
			require.NoError(t, report(wsB, "b1", "thread-of-b"))
			beforeB := storeStateOf(t, s, wsB)
			requireOwned(t, report(wsB, "b2", "thread-of-a"))
			require.Equal(t, beforeB, storeStateOf(t, s, wsB), "the refused report of b2 changed nothing")
			// A session that has a provider session keeps it (issue 25), whoever owns the other.
			err := report(wsB, "b1", "thread-of-a")
			require.Equal(t, forkengine.ReasonProviderSessionChanged, forkengine.ErrorReason(err), "%v", err)
			require.Equal(t, beforeB, storeStateOf(t, s, wsB), "the refused report of b1 changed nothing")
			owner, err := s.ProviderSessionOwner(ctx, "scripted", "thread-of-a")
			require.NoError(t, err)
			require.Equal(t, wsA, owner)
			// A new session of a new provider session claims that one.
			require.NoError(t, report(wsA, "s3", "thread-of-a-2"))
			requireOwned(t, report(wsB, "b3", "thread-of-a-2"))
		},
		"ForkOfAProviderSessionAnotherWorkspaceOwnsIsForbidden": func(t *testing.T, s forkengine.Store) {
			e := hostileEngine(t, s)
			ctx := context.Background()
			seedHostileBase(t, e) // wsA owns p-base
			// A database from before ownership: wsB's session names wsA's provider session.
			legacy := newSession(wsB, "legacy")
			legacy.Provider, legacy.ProviderSessionID = "scripted", "p-base"
			turn := newTurn(wsB, "legacy", "legacy-t1", 1)
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				if err := tx.UpsertSession(ctx, legacy); err != nil {
					return err
				}
				return tx.UpsertTurn(ctx, turn)
			})
			before := storeStateOf(t, s, wsB)
			_, err := e.StartFork(ctx, forkengine.ForkInput{WorkspaceID: wsB, SourceSessionID: "legacy", ThroughTurnID: "legacy-t1", RequestID: "r"})
			requireOwned(t, err)
			require.Equal(t, before, storeStateOf(t, s, wsB), "no operation is created")
			got, err := s.GetSession(ctx, wsB, "legacy")
			require.NoError(t, err, "the session itself stays readable")
			require.Equal(t, "p-base", got.ProviderSessionID)
		},
		"CommittedChildBelongsToItsWorkspace": func(t *testing.T, s forkengine.Store) {
			d := NewScriptedDriver()
			e := hostileEngineWith(t, s, d)
			seedHostileBase(t, e)
			op := startAndProcess(t, e, "r")
			require.Equal(t, forkengine.StatusCommitted, op.Status)
			owner, err := s.ProviderSessionOwner(context.Background(), "scripted", op.TargetProviderSessionID)
			require.NoError(t, err)
			require.Equal(t, wsA, owner)
			psid := op.TargetProviderSessionID
			_, err = e.ReportSession(context.Background(), forkengine.SessionReport{WorkspaceID: wsB, ID: "b", Provider: "scripted",
				ProviderSessionID: &psid})
			requireOwned(t, err)
		},
		"ChildAnotherWorkspaceOwnsIsAnInvalidResult": func(t *testing.T, s forkengine.Store) {
			d := reconcilingDriver()
			e := hostileEngineWith(t, s, d)
			seedHostileBase(t, e)
			ctx := context.Background()
			taken := "thread-of-b"
			_, err := e.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: wsB, ID: "b", Provider: "scripted", ProviderSessionID: &taken})
			require.NoError(t, err)
			namesB := func(_ context.Context, req forkengine.ForkRequest) (forkengine.ForkResult, error) {
				res := AcceptedResult(req)
				res.ProviderSessionID = taken
				return res, nil
			}
			d.QueueFork(ForkStep{Func: namesB})
			op := startAndProcess(t, e, "r")
			require.Equal(t, forkengine.StatusUnknown, op.Status, "a child of another workspace is no evidence of this fork's")
			require.Contains(t, op.Error, "belongs to another workspace")
			_, err = s.GetSession(ctx, wsA, op.TargetSessionID)
			require.ErrorIs(t, err, forkengine.ErrNotFound, "no target session was made")
			owner, err := s.ProviderSessionOwner(ctx, "scripted", taken)
			require.NoError(t, err)
			require.Equal(t, wsB, owner)

			// Reconciliation that finds the same child does not commit it either.
			res, _ := namesB(ctx, d.ForkRequests()[0])
			d.QueueReconcile(ReconcileStep{Result: forkengine.ReconcileResult{Answer: forkengine.ReconcileFound,
				ProviderSessionID: res.ProviderSessionID, StateBindingMode: res.StateBindingMode}})
			got, err := e.ReconcileForkOperation(ctx, wsA, op.ID)
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusUnknown, got.Status)
			require.Equal(t, 1, got.ReconcileAttempts)
			require.Contains(t, got.Error, "belongs to another workspace")
		},
	}
}

func requireOwned(t *testing.T, err error) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, forkengine.CodeForbidden, forkengine.ErrorCode(err), "%v", err)
	require.Equal(t, forkengine.ReasonProviderSessionOwned, forkengine.ErrorReason(err), "%v", err)
}

// storeStateOf is storeState with the owners of the provider sessions the workspace's sessions
// name.
func storeStateOf(t *testing.T, s forkengine.Store, ws string) string {
	t.Helper()
	state := storeState(t, s, ws)
	sessions, err := s.ListSessions(context.Background(), ws, forkengine.SessionFilter{IncludeDeleted: true}, forkengine.PageCursor{}, 10000)
	require.NoError(t, err)
	for _, sess := range sessions {
		owner, _ := s.ProviderSessionOwner(context.Background(), sess.Provider, sess.ProviderSessionID)
		state += "|" + sess.ProviderSessionID + "=" + owner
	}
	return state
}
