package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// eachOfWorkspace fills the first scan target with the workspace instead of selecting it: for
// every table it reads, that target must be the WorkspaceID of the domain value, and every table
// must start with workspace_id (newTable panics otherwise, at package init).
func TestScanTargetsStartWithWorkspace(t *testing.T) {
	t.Parallel()
	var s forkengine.Session
	var tr forkengine.Turn
	var m forkengine.Message
	var l forkengine.Lineage
	var e forkengine.Event
	for name, c := range map[string]struct {
		first any
		ws    *string
	}{
		"sessions": {sessionsTable.targets(&s)[0], &s.WorkspaceID}, "turns": {turnsTable.targets(&tr)[0], &tr.WorkspaceID},
		"messages": {messagesTable.targets(&m)[0], &m.WorkspaceID}, "lineages": {lineagesTable.targets(&l)[0], &l.WorkspaceID},
		"events": {eventLogTable.targets(&e)[0], &e.WorkspaceID},
	} {
		if p, ok := c.first.(*string); !ok || p != c.ws {
			t.Errorf("%s: the first scan target is not WorkspaceID", name)
		}
	}
}

// MessageTextsByTurnIDs reads three columns of MessagesByTurnIDs' rows: the same messages, turn by
// turn in the same order, with the same turn, role and content, and the columns it does not read
// left zero (the workspace is the one asked for).
func TestMessageTextsAreMessagesByTurnsText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTest(t, migratedSQLite(t))
	turnIDs := []string{"t0", "t1", "t2"}
	seedTurnsOfMessages(t, db, turnIDs, map[string]int{"t0": 1, "t1": 2, "t2": 3})
	asked := append(turnIDs, "no-such-turn")
	full, err := db.MessagesByTurnIDs(ctx, "ws", asked)
	require.NoError(t, err)
	texts, err := db.MessageTextsByTurnIDs(ctx, "ws", asked, 100)
	require.NoError(t, err)
	require.Len(t, full, 3)
	require.Len(t, texts, len(full))
	for turn, ms := range full {
		want := make([]forkengine.Message, len(ms))
		for i, m := range ms {
			want[i] = forkengine.Message{WorkspaceID: m.WorkspaceID, TurnID: m.TurnID, Role: m.Role, Content: m.Content}
		}
		require.Equal(t, want, texts[turn], "turn %s", turn)
	}
}

// An id list bound as one JSON array (idList, on SQLite) finds every id as it is: quotes,
// backslashes, control characters and non-ASCII text included, and no id that was not asked for.
func TestIDListsFindIDsAsTheyAre(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTest(t, migratedSQLite(t))
	ids := []string{`quote"d`, `back\slash`, "tab\tand\x01", "ünïcødé ✓", "plain", `\u0041`}
	require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error {
		for i, id := range append(ids, "A", "not asked") {
			if err := tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: "ws", ID: id, CreatedAt: at(i)}); err != nil {
				return err
			}
		}
		return nil
	}))
	got, err := db.SessionsByIDs(ctx, "ws", append(ids, "missing"))
	require.NoError(t, err)
	require.Len(t, got, len(ids))
	for _, id := range ids {
		require.Equal(t, id, got[id].ID)
	}
	latest, err := db.LatestTurnsBySessionIDs(ctx, "ws", ids) // idsCTE: no turns, no rows, no error
	require.NoError(t, err)
	require.Empty(t, latest)
}

// MessageTextsByTurnIDs with a limit is TurnMessagesAfter from the first message, text only: per
// turn its first limit messages, whether the batch's whole lists stay under the batch's limit of
// six turns' rows (limit 10: 60 rows, 20 messages), reach it in the middle of a turn (limit 3:
// turns a, b and c fill 17 of the 18 rows, e is read again with the turns not reached), or in the
// first turn (limit 2: a's 12 messages). On both drivers.
func TestMessageTextsAreTheFirstPageOfEachTurn(t *testing.T) {
	t.Parallel()
	onBothDrivers(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		sizes := map[string]int{"a": 12, "b": 1, "c": 4, "d": 0, "e": 3}
		seedTurnsOfMessages(t, db, []string{"a", "b", "c", "d", "e"}, sizes)
		asked := []string{"e", "c", "a", "d", "b", "none"}
		for _, limit := range []int{10, 3, 2} {
			pages, err := db.TurnMessagesAfter(ctx, "ws", asked, 0, limit)
			require.NoError(t, err)
			texts, err := db.MessageTextsByTurnIDs(ctx, "ws", asked, limit)
			require.NoError(t, err)
			for _, id := range asked {
				var want []forkengine.Message
				for _, m := range pages[id] {
					want = append(want, forkengine.Message{WorkspaceID: "ws", TurnID: id, Role: m.Role, Content: m.Content})
				}
				require.Len(t, want, min(sizes[id], limit), "turn %s, limit %d", id, limit)
				require.Equal(t, want, texts[id], "turn %s, limit %d", id, limit)
			}
		}
	})
}

// seedTurnsOfMessages stores session s of workspace ws with the turns ids, in sequence order, and
// of each sizes[id] user messages ("<turn> <i>").
func seedTurnsOfMessages(t *testing.T, db *DB, ids []string, sizes map[string]int) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error {
		if err := tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: "ws", ID: "s", CreatedAt: at(1)}); err != nil {
			return err
		}
		var turns []forkengine.Turn
		var msgs []forkengine.Message
		for i, id := range ids {
			turns = append(turns, forkengine.Turn{WorkspaceID: "ws", ID: id, SessionID: "s", Sequence: int64(i + 1)})
			for j := range sizes[id] {
				msgs = append(msgs, forkengine.Message{WorkspaceID: "ws", ID: fmt.Sprintf("m-%s-%d", id, j), SessionID: "s",
					TurnID: id, Role: forkengine.RoleUser, Content: fmt.Sprintf("%s %d", id, j), CreatedAt: at(10*i + j)})
			}
		}
		if err := tx.InsertTurns(ctx, turns); err != nil {
			return err
		}
		_, err := tx.InsertMessages(ctx, msgs)
		return err
	}))
}
