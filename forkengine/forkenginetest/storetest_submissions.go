package forkenginetest

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// submissionTests: a turn's submission (the proof binding recovery uses) is recorded once, read
// back exactly, and goes with its turn; server keys keep the first one stored.
func submissionTests() map[string]storeTest {
	sub := func(turnID string) forkengine.Submission {
		return forkengine.Submission{WorkspaceID: wsA, SessionID: "s1", TurnID: turnID, ClientSubmitID: "submit-" + turnID,
			Content: forkengine.SubmissionPlainText, TextDigest: "00ff", RecordedAt: at(3)}
	}
	return map[string]storeTest{
		"InsertedOnceAndReadBack": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			seedSessionWithTurns(t, s, wsA, "s1", 2)
			_, err := s.GetSubmission(ctx, wsA, "s1-t1")
			require.ErrorIs(t, err, forkengine.ErrNotFound)
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.InsertSubmission(ctx, sub("s1-t1")) })
			got, err := s.GetSubmission(ctx, wsA, "s1-t1")
			require.NoError(t, err)
			require.Equal(t, sub("s1-t1"), got)
			requireDuplicate(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.InsertSubmission(ctx, sub("s1-t1")) })
			_, err = s.GetSubmission(ctx, wsB, "s1-t1")
			require.ErrorIs(t, err, forkengine.ErrNotFound, "workspaces are apart")
		},
		"WithoutItsTurnIsErrNotFound": func(t *testing.T, s forkengine.Store) {
			seedSessionWithTurns(t, s, wsA, "s1", 1)
			err := s.Update(context.Background(), func(tx forkengine.Tx) error {
				return tx.InsertSubmission(context.Background(), sub("missing"))
			})
			require.ErrorIs(t, err, forkengine.ErrNotFound)
		},
		"PurgeRemovesIt": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			seedSessionWithTurns(t, s, wsA, "s1", 1)
			seedSessionWithTurns(t, s, wsA, "s2", 1)
			other := sub("s2-t1")
			other.SessionID = "s2"
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				if err := tx.InsertSubmission(ctx, sub("s1-t1")); err != nil {
					return err
				}
				return tx.InsertSubmission(ctx, other)
			})
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.PurgeSession(ctx, wsA, "s1") })
			_, err := s.GetSubmission(ctx, wsA, "s1-t1")
			require.ErrorIs(t, err, forkengine.ErrNotFound)
			_, err = s.GetSubmission(ctx, wsA, "s2-t1")
			require.NoError(t, err, "another session's submission stays")
		},
		"ServerKeyKeepsTheFirst": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			claim := func(name string, candidate []byte) (key []byte) {
				update(t, s, func(ctx context.Context, tx forkengine.Tx) (err error) {
					key, err = tx.ClaimServerKey(ctx, name, candidate)
					return err
				})
				return key
			}
			rolledBack := errors.New("rolled back")
			err := s.Update(ctx, func(tx forkengine.Tx) error {
				key, err := tx.ClaimServerKey(ctx, "k", []byte{9, 9})
				require.NoError(t, err)
				require.Equal(t, []byte{9, 9}, key)
				return rolledBack
			})
			require.ErrorIs(t, err, rolledBack)
			require.Equal(t, []byte{1, 2, 3}, claim("k", []byte{1, 2, 3}), "a rolled-back claim left nothing")
			require.Equal(t, []byte{1, 2, 3}, claim("k", []byte{4, 5, 6}), "the key never changes")
			require.Equal(t, []byte{7}, claim("other", []byte{7}))
		},
	}
}
