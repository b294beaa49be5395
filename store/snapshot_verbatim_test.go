package store

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// htmlSettings has every character encoding/json escapes for HTML by default.
const htmlSettings = `{"endpoint":"https://example.test/v1?a=1&b=2","prompt":"<b>bold</b>","sep":"a` + "\u2028" + `b"}`

// startHTMLFork reports a source whose settings and binding hold HTML characters on a fresh
// engine over db and starts a fork of it, left prepared.
func startHTMLFork(t *testing.T, db *DB) (*forkengine.Engine, *forkenginetest.ScriptedDriver, forkengine.ForkOperation) {
	t.Helper()
	ctx := context.Background()
	driver := forkenginetest.NewScriptedDriver()
	e, err := forkengine.New(forkengine.Config{Store: db, Drivers: map[string]forkengine.Driver{"scripted": driver},
		Logger: quietLog, NoBackground: true, InstanceID: "instance-a"})
	require.NoError(t, err)
	psid, title, ptid := "provider-src", "Trip", "provider-turn-1"
	_, err = e.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "w", ID: "src", Provider: "scripted",
		ProviderSessionID: &psid, Title: &title, Settings: json.RawMessage(htmlSettings)})
	require.NoError(t, err)
	_, err = e.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "w", SessionID: "src", ID: "turn-1",
		Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, ProviderTurnID: &ptid,
		ProviderTurnBinding: json.RawMessage(`{"handle":"x&y"}`)})
	require.NoError(t, err)
	op, err := e.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "w", SourceSessionID: "src",
		ThroughTurnID: "turn-1", RequestID: "request-1"})
	require.NoError(t, err)
	return e, driver, op
}

// A fork whose source's JSON holds &, < or > commits from a snapshot read back from the store:
// the store keeps the JSON bytes as given, so the snapshot hashes as it did when it was frozen.
// Stored HTML-escaped, every commit failed the hash check and the fork stayed provider_accepted.
func testSnapshotKeepsJSONVerbatim(t *testing.T, db *DB) {
	ctx := context.Background()
	e, driver, op := startHTMLFork(t, db)
	stored, err := db.GetOperation(ctx, "w", op.ID)
	require.NoError(t, err)
	require.Equal(t, htmlSettings, string(stored.Snapshot.Session.Settings))
	require.Equal(t, `{"handle":"x&y"}`, string(stored.Snapshot.Boundary.ProviderTurnBinding))

	got, err := e.ProcessOperation(ctx, "w", op.ID) // verifies the snapshot as the store returns it
	require.NoError(t, err)
	require.Equal(t, forkengine.StatusCommitted, got.Status)
	require.Equal(t, 1, driver.ForkCalls())
	target, err := db.GetSession(ctx, "w", got.TargetSessionID)
	require.NoError(t, err)
	require.Equal(t, htmlSettings, string(target.Settings))
}

func TestSnapshotKeepsJSONVerbatimSQLite(t *testing.T) {
	t.Parallel()
	testSnapshotKeepsJSONVerbatim(t, openTest(t, migratedSQLite(t)))
}

func TestSnapshotKeepsJSONVerbatimPostgres(t *testing.T) {
	requirePostgres(t)
	testSnapshotKeepsJSONVerbatim(t, openTest(t, postgresConfig(t)))
}

// A snapshot an earlier store wrote HTML-escaped still commits, once, after an upgrade.
func TestHTMLEscapedSnapshotOfAnEarlierStoreCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := sqliteConfig(t)
	db, err := Open(ctx, cfg)
	require.NoError(t, err)
	_, _, op := startHTMLFork(t, db)
	escaped, err := json.Marshal(op.Snapshot) // what encodeSnapshot wrote before marshalVerbatim
	require.NoError(t, err)
	require.Contains(t, string(escaped), `\u0026b=2`)
	require.NoError(t, db.gorm.Exec(updateSnapshotSQL, string(escaped), "w", op.ID).Error)
	require.NoError(t, db.Close())

	db = openTest(t, cfg) // the same instance restarted: nothing cached, the snapshot is read from the file
	driver := forkenginetest.NewScriptedDriver()
	e, err := forkengine.New(forkengine.Config{Store: db, Drivers: map[string]forkengine.Driver{"scripted": driver},
		Logger: quietLog, NoBackground: true, InstanceID: "instance-a"})
	require.NoError(t, err)
	stored, err := db.GetOperation(ctx, "w", op.ID)
	require.NoError(t, err)
	require.Contains(t, string(stored.Snapshot.Session.Settings), `\u0026`, "the escaped bytes are what is read")
	got, err := e.ProcessOperation(ctx, "w", op.ID)
	require.NoError(t, err)
	require.Equal(t, forkengine.StatusCommitted, got.Status)
	require.Equal(t, 1, driver.ForkCalls())
}
