package store

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Purging a session whose rows other sessions' Histories read keeps those rows in a tombstone
// workspace for as long as one reader is left, and purging the last reader frees them: root ->
// c1 -> c2 and a fork of root through an earlier turn (sib: a committed fork blocks another of
// its boundary until acknowledged); the root is purged (its rows now in a tombstone), then c1
// (its rows, read by c2, in a second tombstone), then sib. Until then the tombstones still hold
// turns, messages, session rows and the segments that name them, and c2 (and sib, while it lives)
// still read their whole prefix as before the first purge; once c2, the last reader, is purged,
// no row of any table names a tombstone workspace. On both drivers.
func TestPurgeOfLastReaderFreesTombstoneRows(t *testing.T) {
	t.Parallel()
	onBothDrivers(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		c := buildChain(t, db, 3, 2) // root t1…t3, c1 presents 1…4, c2 presents 1…5
		e := scriptedEngine(t, db, "tombstone")
		op, err := e.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "ws", SourceSessionID: c.root, ThroughTurnID: "root-t2",
			RequestID: "r-sib", TargetSessionID: "sib"})
		require.NoError(t, err)
		op, err = e.ProcessOperation(ctx, "ws", op.ID)
		require.NoError(t, err)
		require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
		ptid := "p-sib-t3" // sib presents root 1…2, then a turn of its own as buildChain's children have
		_, err = e.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "ws", SessionID: "sib", ID: "sib-t3",
			Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, ProviderTurnID: &ptid, ProviderTurnBinding: []byte(`{"t":1}`)})
		require.NoError(t, err)
		_, err = e.AppendMessages(ctx, forkengine.MessageAppend{WorkspaceID: "ws", SessionID: "sib", TurnID: "sib-t3",
			Messages: []forkengine.MessageInput{{Role: forkengine.RoleUser, Content: "sibling prompt"}}})
		require.NoError(t, err)

		before := map[string]transcript{c.deep: readTranscript(t, db, c.deep), "sib": readTranscript(t, db, "sib")}
		require.Len(t, before[c.deep].turns, 5)
		require.Len(t, before["sib"].turns, 3)
		require.Empty(t, tombstoneRows(t, db), "no tombstone before a purge")

		readers := []string{c.root, "c1", "sib"}
		for i, purged := range readers {
			require.NoError(t, e.DeleteSession(ctx, "ws", purged, true), "purge %s", purged)
			kept := tombstoneRows(t, db)
			for _, table := range []string{"sessions", "turns", "messages", "history_segments.owner_workspace_id"} {
				require.Positive(t, kept[table], "after purging %s, %s still holds tombstone rows", purged, table)
			}
			for _, reader := range []string{c.deep, "sib"} {
				if reader == "sib" && i == len(readers)-1 {
					continue
				}
				require.Equal(t, before[reader], readTranscript(t, db, reader), "%s after purging %s", reader, purged)
			}
		}
		require.NoError(t, e.DeleteSession(ctx, "ws", c.deep, true))
		require.Empty(t, tombstoneRows(t, db), "the last reader's purge frees every tombstone row")
	})
}

// transcript is a session's whole turns page, each turn's messages and its counts.
type transcript struct {
	turns    []forkengine.Turn
	messages map[string][]forkengine.Message
	turnsN   map[string]int
	msgsN    map[string]int
}

func readTranscript(t *testing.T, db *DB, session string) transcript {
	t.Helper()
	ctx := context.Background()
	page, err := db.TurnsBySessionIDs(ctx, "ws", []string{session}, 0, 0)
	require.NoError(t, err)
	var ids []string
	for _, turn := range page[session] {
		ids = append(ids, turn.ID)
	}
	messages, err := db.MessagesByTurnIDs(ctx, "ws", ids)
	require.NoError(t, err)
	turnsN, err := db.CountTurnsBySessionIDs(ctx, "ws", []string{session})
	require.NoError(t, err)
	msgsN, err := db.CountSessionMessages(ctx, "ws", []string{session})
	require.NoError(t, err)
	return transcript{turns: page[session], messages: messages, turnsN: turnsN, msgsN: msgsN}
}

// tombstoneRows counts, per table (and per column, for a table with more than one workspace
// column), the rows whose workspace column names a tombstone workspace; tables with none are left
// out. Every column of the schema ending in workspace_id is asked, so a table a later migration
// adds is asked too.
func tombstoneRows(t *testing.T, db *DB) map[string]int {
	t.Helper()
	type column struct{ Table, Name string }
	var columns []column
	if db.gorm.Dialector.Name() == "postgres" {
		require.NoError(t, db.gorm.Raw(`SELECT table_name AS "table", column_name AS name FROM information_schema.columns
			WHERE table_schema = current_schema() AND column_name LIKE '%workspace_id' ORDER BY table_name, column_name`).
			Scan(&columns).Error)
	} else {
		require.NoError(t, db.gorm.Raw(`SELECT m.name AS "table", p.name AS name FROM sqlite_master m JOIN pragma_table_info(m.name) p
			WHERE m.type = 'table' AND p.name LIKE '%workspace_id' ORDER BY m.name, p.name`).Scan(&columns).Error)
	}
	require.NotEmpty(t, columns)
	got := map[string]int{}
	for _, c := range columns {
		var n int
		require.NoError(t, db.gorm.Raw(fmt.Sprintf(`SELECT COUNT(*) FROM %q WHERE substr(%q, 1, %d) = ?`, c.Table, c.Name,
			len(tombstonePrefix)), tombstonePrefix).Scan(&n).Error, c.Table)
		if n == 0 {
			continue
		}
		key := c.Table
		if c.Name != "workspace_id" || strings.HasSuffix(c.Table, "segments") {
			key = c.Table + "." + c.Name
		}
		got[key] = n
	}
	return got
}
