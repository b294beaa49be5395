package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

func TestSharedKeyColumnsAreWorkspaceAndSession(t *testing.T) {
	t.Parallel()
	for _, cols := range [][]string{turnsTable.names, messagesTable.names} {
		require.Equal(t, "workspace_id", cols[sharedKeyColumns[0]])
		require.Equal(t, "session_id", cols[sharedKeyColumns[1]])
	}
	require.Equal(t, "INSERT INTO t (workspace_id, id, session_id, x) VALUES (?1, ?3, ?2, ?4), (?1, ?5, ?2, ?6)",
		insertSharedSQL("t", []string{"workspace_id", "id", "session_id", "x"}, 2))
}

// A batch of one session binds its workspace and session once; a batch that mixes sessions (or
// workspaces) binds every value. Both store exactly the rows given.
func TestInsertedRowsKeepTheirSessions(t *testing.T) {
	t.Parallel()
	for name, sessionOf := range map[string]func(i int) string{
		"OneSession":    func(int) string { return "s1" },
		"MixedSessions": func(i int) string { return fmt.Sprintf("s%d", 1+i%2) },
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db := openTest(t, migratedSQLite(t))
			var turns []forkengine.Turn
			var msgs []forkengine.Message
			for i := range 6 {
				sid := sessionOf(i)
				tid := fmt.Sprintf("t%d", i)
				turns = append(turns, forkengine.Turn{WorkspaceID: "ws", SessionID: sid, ID: tid, Sequence: int64(i + 1),
					Phase: forkengine.PhaseSettled, Origin: "o" + tid})
				msgs = append(msgs, forkengine.Message{WorkspaceID: "ws", SessionID: sid, TurnID: tid, ID: tid + "-m",
					Role: forkengine.RoleUser, Content: "content of " + tid})
			}
			require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error {
				for _, sid := range []string{"s1", "s2"} {
					if err := tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: "ws", ID: sid, Kind: forkengine.SessionRoot}); err != nil {
						return err
					}
				}
				if err := tx.InsertTurns(ctx, turns); err != nil {
					return err
				}
				_, err := tx.InsertMessages(ctx, msgs)
				return err
			}))
			ids := make([]string, len(turns))
			for i, turn := range turns {
				ids[i] = turn.ID
			}
			byTurn, err := db.MessagesByTurnIDs(ctx, "ws", ids)
			require.NoError(t, err)
			for i, turn := range turns {
				got, err := db.GetTurn(ctx, "ws", turn.ID)
				require.NoError(t, err)
				require.Equal(t, turn.SessionID, got.SessionID)
				require.Equal(t, turn.Origin, got.Origin)
				require.Len(t, byTurn[turn.ID], 1)
				m := byTurn[turn.ID][0]
				require.Equal(t, msgs[i].ID, m.ID)
				require.Equal(t, msgs[i].SessionID, m.SessionID)
				require.Equal(t, msgs[i].Content, m.Content)
			}
		})
	}
}
