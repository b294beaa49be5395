package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// seedGraph stores n sessions s0..s(n-1) with three turns each (two messages per turn) and an
// operation plus lineage per session forking it into "<id>-fork".
func seedGraph(t *testing.T, db *DB, n int) (sessions, turns []string) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error {
		for i := range n {
			sid := fmt.Sprintf("s%d", i)
			sessions = append(sessions, sid)
			if err := tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: "ws", ID: sid, Kind: forkengine.SessionRoot}); err != nil {
				return err
			}
			var msgs []forkengine.Message
			for seq := int64(1); seq <= 3; seq++ {
				tid := fmt.Sprintf("%s-t%d", sid, seq)
				turns = append(turns, tid)
				phase := forkengine.PhaseSettled
				if seq == 3 {
					phase = forkengine.PhaseRunning
				}
				if err := tx.UpsertTurn(ctx, forkengine.Turn{WorkspaceID: "ws", SessionID: sid, ID: tid, Sequence: seq, Phase: phase}); err != nil {
					return err
				}
				msgs = append(msgs, forkengine.Message{WorkspaceID: "ws", SessionID: sid, TurnID: tid, ID: tid + "-m1"},
					forkengine.Message{WorkspaceID: "ws", SessionID: sid, TurnID: tid, ID: tid + "-m2"})
			}
			if _, err := tx.InsertMessages(ctx, msgs); err != nil {
				return err
			}
			op := forkengine.ForkOperation{WorkspaceID: "ws", ID: "op-" + sid, RequestID: "req-" + sid, SourceSessionID: sid,
				ThroughTurnID: sid + "-t1", TargetSessionID: sid + "-fork", Status: forkengine.StatusCommitted}
			if err := tx.InsertOperation(ctx, op); err != nil {
				return err
			}
			l := forkengine.Lineage{WorkspaceID: "ws", OperationID: op.ID, SourceSessionID: sid, SourceTurnID: op.ThroughTurnID, TargetSessionID: op.TargetSessionID}
			if err := tx.InsertLineage(ctx, l); err != nil {
				return err
			}
		}
		return nil
	}))
	return sessions, turns
}

// batchReaders calls every batch reader of r with the given session and turn ids.
func batchReaders(r forkengine.Reader, sessions, turns []string) map[string]func(context.Context) error {
	targets := make([]string, len(sessions))
	ops := make([]string, len(sessions))
	for i, s := range sessions {
		targets[i], ops[i] = s+"-fork", "op-"+s
	}
	messages := make([]string, len(turns))
	for i, t := range turns {
		messages[i] = t + "-m1"
	}
	discard := func(_ any, err error) error { return err }
	return map[string]func(context.Context) error{
		"SessionsByIDs":                  func(ctx context.Context) error { return discard(r.SessionsByIDs(ctx, "ws", sessions)) },
		"TurnsByIDs":                     func(ctx context.Context) error { return discard(r.TurnsByIDs(ctx, "ws", turns)) },
		"TurnsBySessionIDs(all)":         func(ctx context.Context) error { return discard(r.TurnsBySessionIDs(ctx, "ws", sessions, 0, 0)) },
		"TurnsBySessionIDs(after,limit)": func(ctx context.Context) error { return discard(r.TurnsBySessionIDs(ctx, "ws", sessions, 1, 1)) },
		"CountTurnsBySessionIDs":         func(ctx context.Context) error { return discard(r.CountTurnsBySessionIDs(ctx, "ws", sessions)) },
		"LatestTurnsBySessionIDs":        func(ctx context.Context) error { return discard(r.LatestTurnsBySessionIDs(ctx, "ws", sessions)) },
		"ActiveTurnsBySessionIDs":        func(ctx context.Context) error { return discard(r.ActiveTurnsBySessionIDs(ctx, "ws", sessions)) },
		"MessagesByTurnIDs":              func(ctx context.Context) error { return discard(r.MessagesByTurnIDs(ctx, "ws", turns)) },
		"MessagesByIDs":                  func(ctx context.Context) error { return discard(r.MessagesByIDs(ctx, "ws", messages)) },
		"LineagesByTargetIDs":            func(ctx context.Context) error { return discard(r.LineagesByTargetIDs(ctx, "ws", targets)) },
		"LineagesBySourceIDs":            func(ctx context.Context) error { return discard(r.LineagesBySourceIDs(ctx, "ws", sessions)) },
		"OperationsByIDs":                func(ctx context.Context) error { return discard(r.OperationsByIDs(ctx, "ws", ops)) },
		"OperationsBySourceIDs":          func(ctx context.Context) error { return discard(r.OperationsBySourceIDs(ctx, "ws", sessions)) },
	}
}

// snapshotStatements is what a batch reader adds on a cold snapshot cache: operations are read
// first, then the snapshots the cache lacks, in one more statement.
func snapshotStatements(reader string) int64 {
	if reader == "OperationsByIDs" || reader == "OperationsBySourceIDs" {
		return 1
	}
	return 0
}

// forgetSnapshots empties db's snapshot cache, as a freshly opened store has it.
func forgetSnapshots(db *DB) {
	db.snapshots.mu.Lock()
	defer db.snapshots.mu.Unlock()
	clear(db.snapshots.entries)
}

// statementsOf returns how many statements fn executed.
func statementsOf(t *testing.T, db *DB, fn func(context.Context) error) int64 {
	t.Helper()
	before := db.Statements()
	require.NoError(t, fn(context.Background()))
	return db.Statements() - before
}

func TestEveryBatchReaderIsOneStatement(t *testing.T) {
	t.Parallel()
	t.Run("SQLite", func(t *testing.T) { testOneStatementPerBatchReader(t, sqliteConfig(t)) })
	t.Run("Postgres", func(t *testing.T) {
		requirePostgres(t)
		testOneStatementPerBatchReader(t, postgresConfig(t))
	})
}

func testOneStatementPerBatchReader(t *testing.T, cfg Config) {
	db := openTest(t, cfg)
	sessions, turns := seedGraph(t, db, 100)
	for name, read := range batchReaders(db, sessions, turns) {
		forgetSnapshots(db)
		require.Equal(t, 1+snapshotStatements(name), statementsOf(t, db, read), "%s over %d sessions / %d turns", name, len(sessions), len(turns))
		require.Equal(t, int64(1), statementsOf(t, db, read), "%s again, snapshots cached", name)
	}
	for name, read := range batchReaders(db, nil, nil) {
		require.Zero(t, statementsOf(t, db, read), "%s with no ids asks nothing", name)
	}
}

func TestBatchReadersSplitOnlyAboveTheParameterLimit(t *testing.T) {
	t.Parallel()
	db := openTest(t, migratedSQLite(t))
	sessions, turns := seedGraph(t, db, 350) // 1050 turns: two chunks of turn ids
	for name, read := range batchReaders(db, sessions, turns) {
		forgetSnapshots(db)
		want := 1 + snapshotStatements(name)
		if name == "TurnsByIDs" || name == "MessagesByTurnIDs" || name == "MessagesByIDs" {
			want = 2
		}
		require.Equal(t, want, statementsOf(t, db, read), name)
	}
	got, err := db.TurnsByIDs(context.Background(), "ws", turns)
	require.NoError(t, err)
	require.Len(t, got, len(turns), "chunked reads return every row")
}

func TestStatementsCountsInsideTransactions(t *testing.T) {
	t.Parallel()
	db := openTest(t, migratedSQLite(t))
	n := statementsOf(t, db, func(ctx context.Context) error {
		return db.Update(ctx, func(tx forkengine.Tx) error {
			// The title it replaces (for the search index) and the upsert; an empty title indexes nothing.
			if err := tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: "ws", ID: "s"}); err != nil { // 2
				return err
			}
			_, err := tx.SessionsByIDs(ctx, "ws", []string{"s", "t"}) // 1
			if err != nil {
				return err
			}
			_, err = tx.AppendEvents(ctx, []forkengine.Event{{WorkspaceID: "ws"}, {WorkspaceID: "ws"}}) // reserve + insert
			return err
		})
	})
	require.Equal(t, int64(5), n)
}
