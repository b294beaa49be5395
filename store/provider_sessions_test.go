package store

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// Two instances, two workspaces, one provider session each pair, reported at the same moment:
// only the database sees the two claims meet (each report holds the lock of its own session).
// Exactly one workspace owns it and the other is refused with provider_session_owned, never an
// internal error and never two owners.
func TestProviderSessionReportedByTwoWorkspacesAtOnceHasOneOwner(t *testing.T) {
	t.Parallel()
	in := newTwoInstances(t)
	ctx := context.Background()
	const pairs = 60
	var mu sync.Mutex
	won := map[int][]string{}
	outcomes := map[string]int{}
	in.together(2*pairs, func(e *forkengine.Engine, i int) {
		ws, pair := []string{"wa", "wb"}[i%2], i/2
		psid := fmt.Sprintf("thread-%d", pair)
		_, err := e.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: ws, ID: fmt.Sprintf("s-%d", pair),
			Provider: "scripted", ProviderSessionID: &psid})
		mu.Lock()
		defer mu.Unlock()
		outcomes[outcome(err)]++
		if err == nil {
			won[pair] = append(won[pair], ws)
		}
	})
	owned := string(forkengine.CodeForbidden) + "/" + forkengine.ReasonProviderSessionOwned
	require.Equal(t, map[string]int{"ok": pairs, owned: pairs}, outcomes, "one owner and one refusal per provider session")
	for pair := range pairs {
		require.Len(t, won[pair], 1, "pair %d", pair)
		owner, err := in.dbs[pair%2].ProviderSessionOwner(ctx, "scripted", fmt.Sprintf("thread-%d", pair))
		require.NoError(t, err)
		require.Equal(t, won[pair][0], owner, "the workspace whose report succeeded owns it")
		loser := map[string]string{"wa": "wb", "wb": "wa"}[owner]
		_, err = in.dbs[0].GetSession(ctx, loser, fmt.Sprintf("s-%d", pair))
		require.ErrorIs(t, err, forkengine.ErrNotFound, "the refused report wrote nothing")
	}
	in.close(t)
}

// Migration 14 gives every provider session a database already holds one owner, even where
// several workspaces reported it before ownership existed: the earliest session's workspace
// (creation time, then workspace id). The others keep their sessions, which they can still read
// and report unchanged, but cannot fork through that provider session, nor report it anew.
func testProviderSessionsMigration(t *testing.T, cfg Config) {
	ctx := context.Background()
	old, before := openBefore(t, cfg, 14)
	legacy := []forkengine.Session{
		legacySession("wb", "shared-late", "thread-shared", 2),
		legacySession("wa", "shared-early", "thread-shared", 1),
		legacySession("wb", "tie-b", "thread-tie", 5),
		legacySession("wa", "tie-a", "thread-tie", 5),
		legacySession("wc", "none", "", 3),
	}
	err := old.Update(ctx, func(tx forkengine.Tx) error {
		for _, s := range legacy {
			if err := upsertSessionAtVersion(ctx, tx, 13, s); err != nil {
				return err
			}
		}
		return upsertTurnWithoutDetails(ctx, tx, settledTurn("wb", "shared-late", "shared-late-t1"))
	})
	require.NoError(t, err)
	require.NoError(t, old.Close())

	db := openTest(t, cfg)
	require.Equal(t, len(migrations)-before, db.migrated)
	for psid, want := range map[string]string{"thread-shared": "wa", "thread-tie": "wa"} {
		owner, err := db.ProviderSessionOwner(ctx, "scripted", psid)
		require.NoError(t, err)
		require.Equal(t, want, owner, psid)
	}
	_, err = db.ProviderSessionOwner(ctx, "scripted", "")
	require.ErrorIs(t, err, forkengine.ErrNotFound, "a session without a provider session claims nothing")

	e, err := forkengine.New(forkengine.Config{Store: db, Drivers: map[string]forkengine.Driver{"scripted": forkenginetest.NewScriptedDriver()},
		NoBackground: true, Logger: quietLog})
	require.NoError(t, err)
	title, psid := "renamed", "thread-shared"
	_, err = e.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "wb", ID: "shared-late", Provider: "scripted", Title: &title})
	require.NoError(t, err, "the other workspace's session keeps working")
	_, err = e.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "wb", SourceSessionID: "shared-late", ThroughTurnID: "shared-late-t1", RequestID: "r"})
	require.Equal(t, forkengine.ReasonProviderSessionOwned, forkengine.ErrorReason(err), "but cannot fork through it: %v", err)
	_, err = e.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "wb", ID: "new", Provider: "scripted", ProviderSessionID: &psid})
	require.Equal(t, forkengine.ReasonProviderSessionOwned, forkengine.ErrorReason(err), "nor report it anew: %v", err)
}

func TestProviderSessionsMigrationSQLite(t *testing.T) {
	t.Parallel()
	testProviderSessionsMigration(t, sqliteConfig(t))
}

func TestProviderSessionsMigrationPostgres(t *testing.T) {
	requirePostgres(t)
	testProviderSessionsMigration(t, postgresConfig(t))
}

func legacySession(ws, id, psid string, minute int) forkengine.Session {
	return forkengine.Session{WorkspaceID: ws, ID: id, Kind: forkengine.SessionRoot, Provider: "scripted",
		ProviderSessionID: psid, Settings: []byte("{}"), Visible: true, CreatedAt: at(minute), UpdatedAt: at(minute)}
}

func settledTurn(ws, session, id string) forkengine.Turn {
	settled := at(3)
	return forkengine.Turn{WorkspaceID: ws, SessionID: session, ID: id, Sequence: 1, Phase: forkengine.PhaseSettled,
		Outcome: forkengine.OutcomeCompleted, StartedAt: at(2), SettledAt: &settled, UpdatedAt: settled,
		ProviderTurnID: "provider-" + id, ProviderTurnBinding: []byte(`{"v":1}`)}
}
