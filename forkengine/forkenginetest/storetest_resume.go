package forkenginetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// resumeTests: the resume check (reference §5.4) on a store: a committed fork's target verifies,
// a session that is no fork has nothing to verify, and each broken identity has its reason.
func resumeTests() map[string]storeTest {
	committedFork := func(t *testing.T, s forkengine.Store) (*scenarioRig, forkengine.ForkOperation) {
		r := newScenarioRig(t, s)
		r.source()
		r.turn("turn-7", forkengine.PhaseSettled, true, nil)
		op, err := r.fork("request-1", "turn-7")
		require.NoError(t, err)
		op = r.process(op)
		require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
		return r, op
	}
	return map[string]storeTest{
		// 13. Given committed op-1 (source-1 -> target, provider-session-1 -> its child) and the
		// target's lineage, when the target is checked before resume, then it verifies, with the
		// four ids a binder is called with.
		"Scenario13_ProviderStateIsRepairedOnResume": func(t *testing.T, s forkengine.Store) {
			r, op := committedFork(t, s)
			v, err := r.engine.VerifyForkedSession(r.ctx, scenarioWS, op.TargetSessionID)
			require.NoError(t, err)
			require.Equal(t, forkengine.VerificationVerified, v.Status)
			require.Empty(t, v.Reason)
			require.True(t, v.Resumable())
			require.NotNil(t, v.Operation)
			require.NotNil(t, v.Lineage)
			require.Equal(t, op.ID, v.Lineage.OperationID)
			require.Equal(t, [4]string{scenarioSource, op.TargetSessionID, "provider-session-1", "child-" + op.ID},
				[4]string{v.Operation.SourceSessionID, v.Operation.TargetSessionID, v.Operation.SourceProviderSessionID,
					v.Operation.TargetProviderSessionID})
			require.Equal(t, "child-"+op.ID, v.Session.ProviderSessionID)
			require.Empty(t, v.Operation.Snapshot.Turns, "the check does not carry the transcript")
			require.Equal(t, 1, r.driver.ForkCalls(), "checking never forks again")

			v, err = r.engine.VerifyForkedSession(r.ctx, scenarioWS, scenarioSource)
			require.NoError(t, err)
			require.Equal(t, forkengine.VerificationNotAFork, v.Status, "the source is no fork: nothing to verify")
			require.True(t, v.Resumable())
			require.Nil(t, v.Lineage)

			_, err = r.engine.VerifyForkedSession(r.ctx, scenarioWS, "missing")
			requireReason(t, err, forkengine.CodeNotFound, "")
			_, err = r.engine.VerifyForkedSession(r.ctx, scenarioWS, " bad")
			requireReason(t, err, forkengine.CodeInvalid, forkengine.ReasonInvalidID)
		},
		"BrokenIdentitiesAreUnverified": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			r, op := committedFork(t, s)
			target, err := s.GetSession(ctx, scenarioWS, op.TargetSessionID)
			require.NoError(t, err)
			lineages, err := s.LineagesByTargetIDs(ctx, scenarioWS, []string{op.TargetSessionID})
			require.NoError(t, err)
			lineage := lineages[op.TargetSessionID]
			check := func(sessionID, reason string) {
				t.Helper()
				v, err := r.engine.VerifyForkedSession(ctx, scenarioWS, sessionID)
				require.NoError(t, err)
				require.Equal(t, forkengine.VerificationUnverified, v.Status)
				require.Equal(t, reason, v.Reason)
				require.False(t, v.Resumable())
			}
			// Each is a database no forkgraph writes, made behind the engine: a lineage naming
			// an operation that is missing, not committed, or of another target, and a target
			// moved to another provider session.
			plant := func(id string, l forkengine.Lineage) {
				t.Helper()
				session := target
				session.ID = id
				update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
					if err := tx.UpsertSession(ctx, session); err != nil {
						return err
					}
					l.TargetSessionID = id
					return tx.InsertLineage(ctx, l)
				})
			}
			missing := lineage
			missing.OperationID = "no-such-operation"
			plant("planted-missing", missing)
			check("planted-missing", forkengine.ReasonOperationMissing)

			prepared := newOperation(scenarioWS, "op-prepared", scenarioSource, "turn-7", "planted-prepared", forkengine.StatusPrepared)
			prepared.RequestID = "request-prepared"
			insertOperations(t, s, prepared)
			notCommitted := lineage
			notCommitted.OperationID = prepared.ID
			plant("planted-prepared", notCommitted)
			check("planted-prepared", forkengine.ReasonOperationNotCommitted)

			elsewhere := newOperation(scenarioWS, "op-elsewhere", scenarioSource, "turn-7", "someone-else", forkengine.StatusCommitted)
			elsewhere.RequestID, elsewhere.TargetProviderSessionID = "request-elsewhere", target.ProviderSessionID
			insertOperations(t, s, elsewhere)
			otherTarget := lineage
			otherTarget.OperationID = elsewhere.ID
			plant("planted-other-target", otherTarget)
			check("planted-other-target", forkengine.ReasonTargetMismatch)

			moved := target
			moved.ProviderSessionID = "provider-session-elsewhere"
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.UpsertSession(ctx, moved) })
			check(op.TargetSessionID, forkengine.ReasonProviderSessionMismatch)
		},
	}
}
