package store

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// A fork's environment and provider target ref are for the dispatch only (reference §5.5,
// issue 25): the driver gets them, no row of either database does. resolvers'
// TestForkWithAnotherModel greps the SQLite file through GraphQL; these read every column of
// every table back, on both dialects, after a fork that carried them has committed.
func TestForkEnvironmentNeverReachesTheDatabaseSQLite(t *testing.T) {
	t.Parallel()
	cfg := migratedSQLite(t)
	dump := forkWithEnvironment(t, openTest(t, cfg))
	files, err := filepath.Glob(cfg.DSN + "*") // the database and its WAL
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		dump += string(raw)
	}
	requireNoDispatchValues(t, dump)
}

func TestForkEnvironmentNeverReachesTheDatabasePostgres(t *testing.T) {
	requirePostgres(t)
	t.Parallel()
	requireNoDispatchValues(t, forkWithEnvironment(t, openTest(t, postgresConfig(t))))
}

const (
	envMarker     = "env-secret-5d1c7e"
	refMarker     = "target-ref-0a9f3b"
	contextMarker = "context-fact-77e2"
)

func requireNoDispatchValues(t *testing.T, dump string) {
	t.Helper()
	// Asserted without printing the dump: it holds the whole SQLite file.
	require.True(t, strings.Contains(dump, contextMarker), "the frozen context is stored: the read sees the target's column")
	for _, marker := range []string{envMarker, refMarker} {
		if i := strings.Index(dump, marker); i >= 0 {
			t.Errorf("%s is stored: %q", marker, dump[max(0, i-200):min(len(dump), i+len(marker)+50)])
		}
	}
}

// forkWithEnvironment commits a fork whose target has an environment, a provider target ref and
// a prepared context, checks the driver got all three, and returns every row of every table as
// text (bytes columns escaped, so an ASCII marker stays readable).
func forkWithEnvironment(t *testing.T, db *DB) string {
	t.Helper()
	ctx := context.Background()
	driver := forkenginetest.NewScriptedDriver()
	e, err := forkengine.New(forkengine.Config{Store: db, Drivers: map[string]forkengine.Driver{"scripted": driver},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, e.Close(context.Background())) })
	psid, ptid := "provider-src", "provider-src-t1"
	_, err = e.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "w", ID: "src", Provider: "scripted", ProviderSessionID: &psid})
	require.NoError(t, err)
	_, err = e.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "w", SessionID: "src", ID: "src-t1", Phase: forkengine.PhaseSettled,
		Outcome: forkengine.OutcomeCompleted, ProviderTurnID: &ptid, ProviderTurnBinding: json.RawMessage(`{"v":1}`)})
	require.NoError(t, err)
	op, err := e.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "w", SourceSessionID: "src", ThroughTurnID: "src-t1", RequestID: "r1",
		Target: &forkengine.TargetInput{PreparedContext: json.RawMessage(`{"fact":"` + contextMarker + `"}`),
			Environment:       []forkengine.EnvironmentVariable{{Name: "API_TOKEN", Value: envMarker}},
			ProviderTargetRef: refMarker}})
	require.NoError(t, err)
	require.NoError(t, e.Close(ctx), "waits for the dispatch the start handed over, the one that carries them")
	op, err = db.GetOperation(ctx, "w", op.ID)
	require.NoError(t, err)
	require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
	sent := driver.ForkRequests()
	require.Len(t, sent, 1)
	require.Equal(t, []forkengine.EnvironmentVariable{{Name: "API_TOKEN", Value: envMarker}}, sent[0].Environment)
	require.Equal(t, refMarker, sent[0].ProviderTargetRef)
	return dumpRows(t, db)
}

// dumpRows reads every row of every table of db's schema as text.
func dumpRows(t *testing.T, db *DB) string {
	t.Helper()
	type column struct{ Table, Name, Type string }
	var columns []column
	if db.gorm.Dialector.Name() == "postgres" {
		require.NoError(t, db.gorm.Raw(`SELECT table_name AS "table", column_name AS name, data_type AS type
			FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`).
			Scan(&columns).Error)
	} else {
		require.NoError(t, db.gorm.Raw(`SELECT m.name AS "table", p.name AS name, p.type AS type
			FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table' ORDER BY m.name, p.cid`).
			Scan(&columns).Error)
	}
	require.NotEmpty(t, columns)
	byTable := map[string][]string{}
	var tables []string
	for _, c := range columns {
		expr := fmt.Sprintf(`CAST(%q AS TEXT)`, c.Name)
		if strings.EqualFold(c.Type, "bytea") {
			expr = fmt.Sprintf(`encode(%q, 'escape')`, c.Name)
		}
		if byTable[c.Table] == nil {
			tables = append(tables, c.Table)
		}
		byTable[c.Table] = append(byTable[c.Table], "COALESCE("+expr+", '')")
	}
	var out strings.Builder
	for _, table := range tables {
		var rows []string
		require.NoError(t, db.gorm.Raw(fmt.Sprintf(`SELECT %s FROM %q`, strings.Join(byTable[table], " || ' ' || "), table)).
			Scan(&rows).Error, table)
		for _, r := range rows {
			out.WriteString(r)
			out.WriteByte('\n')
		}
	}
	return out.String()
}
