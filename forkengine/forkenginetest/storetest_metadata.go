package forkenginetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// metadataTests cover a session's free-form metadata: reported, kept by a report that omits it,
// refused unless it is a JSON object, carried whole by an operation's snapshot, and copied to a
// fork's child without its source-only keys.
func metadataTests() map[string]storeTest {
	return map[string]storeTest{
		"ReportedMetadataIsStoredAndKept": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.targetSource(`{}`)
			require.Nil(t, r.stored().Metadata, "a session reported without metadata has none")

			report := forkengine.SessionReport{WorkspaceID: scenarioWS, ID: scenarioSource, Provider: scenarioProvider,
				Metadata: json.RawMessage(`{ "b": [1, 2], "a": {"x": "&<>"} }`)}
			_, err := r.engine.ReportSession(r.ctx, report)
			require.NoError(t, err)
			require.JSONEq(t, `{"a":{"x":"&<>"},"b":[1,2]}`, string(r.stored().Metadata))

			report.Metadata = nil // omitted: kept
			_, err = r.engine.ReportSession(r.ctx, report)
			require.NoError(t, err)
			require.JSONEq(t, `{"a":{"x":"&<>"},"b":[1,2]}`, string(r.stored().Metadata))
		},
		"MetadataThatIsNoObjectIsRefusedAndChangesNothing": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.targetSource(`{}`)
			_, err := r.engine.ReportSession(r.ctx, forkengine.SessionReport{WorkspaceID: scenarioWS, ID: scenarioSource,
				Provider: scenarioProvider, Metadata: json.RawMessage(`{"a":1}`)})
			require.NoError(t, err)
			before := r.stored()
			for _, bad := range []string{`[1]`, `"text"`, `3`, `{"a":`} {
				_, err := r.engine.ReportSession(r.ctx, forkengine.SessionReport{WorkspaceID: scenarioWS, ID: scenarioSource,
					Provider: scenarioProvider, Title: strPtr("changed"), Metadata: json.RawMessage(bad)})
				require.Equal(t, forkengine.CodeInvalid, forkengine.ErrorCode(err), "%s: %v", bad, err)
				require.Equal(t, before, r.stored(), bad)
			}
		},
		// Reference §1.1: metadata is copied, but the target clears imported, usage and goal;
		// every other key reaches the child as the source had it, and the source keeps its own.
		"ForkChildGetsMetadataWithoutImportedUsageAndGoal": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.targetSource(`{}`)
			r.reportMetadata(`{"imported":{"from":"cli"},"usage":{"tokens":900},"goal":{"text":"ship"},"team":"a&b","pins":[1,2]}`)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			op, err := r.forkWith("request-1", "turn-7", nil)
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusCommitted, r.process(op).Status)
			require.JSONEq(t, `{"team":"a&b","pins":[1,2]}`, string(r.child(op).Metadata))
			require.JSONEq(t, `{"imported":{"from":"cli"},"usage":{"tokens":900},"goal":{"text":"ship"},"team":"a&b","pins":[1,2]}`,
				string(r.stored().Metadata))
		},
		"ForkOfMetadataWithoutClearedKeysCopiesIt": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.targetSource(`{}`)
			r.reportMetadata(`{"team":"a"}`)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			op, err := r.forkWith("request-1", "turn-7", &forkengine.TargetInput{Cwd: strPtr("/prepared")})
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusCommitted, r.process(op).Status)
			require.Equal(t, string(r.stored().Metadata), string(r.child(op).Metadata))
		},
		"ForkWithoutMetadataLeavesTheChildWithout": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.targetSource(`{}`)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			op, err := r.forkWith("request-1", "turn-7", nil)
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusCommitted, r.process(op).Status)
			require.Nil(t, r.child(op).Metadata)
		},
		"SnapshotKeepsSessionMetadata": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			op := fullOperation(wsA, "op1")
			op.Snapshot.Session.Metadata = json.RawMessage(`{"goal":{"text":"ship"},"usage":{"tokens":12}}`)
			bare := fullOperation(wsA, "op2")
			bare.RequestID, bare.ThroughTurnID, bare.TargetSessionID = "req-op2", "other-turn", "other-target"
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				if err := tx.InsertOperation(ctx, op); err != nil {
					return err
				}
				return tx.InsertOperation(ctx, bare)
			})
			got, err := s.GetOperation(ctx, wsA, "op1")
			require.NoError(t, err)
			require.JSONEq(t, string(op.Snapshot.Session.Metadata), string(got.Snapshot.Session.Metadata))
			requireSameJSON(t, op.Snapshot, got.Snapshot)
			got, err = s.GetOperation(ctx, wsA, "op2")
			require.NoError(t, err)
			require.Nil(t, got.Snapshot.Session.Metadata)
		},
	}
}

// source is the scenario's source session as stored.
func (r *scenarioRig) stored() forkengine.Session {
	r.t.Helper()
	s, err := r.store.GetSession(r.ctx, scenarioWS, scenarioSource)
	require.NoError(r.t, err)
	return s
}

// reportMetadata reports the scenario's source with metadata md.
func (r *scenarioRig) reportMetadata(md string) {
	r.t.Helper()
	_, err := r.engine.ReportSession(r.ctx, forkengine.SessionReport{WorkspaceID: scenarioWS, ID: scenarioSource,
		Provider: scenarioProvider, Metadata: json.RawMessage(md)})
	require.NoError(r.t, err)
}
