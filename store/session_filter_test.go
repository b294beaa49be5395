package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// TestSessionFilterSQLMatchesGorm: ListSessions runs fixed SQL (sessionFilterSQL); the backward
// page and the row count apply the same conditions through gorm (filterSessions). Every filter,
// with and without a cursor, must select the same sessions both ways.
func TestSessionFilterSQLMatchesGorm(t *testing.T) {
	t.Parallel()
	db := openTest(t, migratedSQLite(t))
	ctx := context.Background()
	deleted := at(1000)
	require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error {
		for i := range 40 {
			s := forkengine.Session{WorkspaceID: "ws", ID: fmt.Sprintf("s%02d", i), Visible: i%2 == 0, CreatedAt: at(i / 2),
				Kind: forkengine.SessionRoot, Provider: []string{"simulated", "webhook"}[i%3%2]}
			if i%5 == 4 {
				s.Kind, s.DeletedAt = forkengine.SessionChild, &deleted
			}
			if err := tx.UpsertSession(ctx, s); err != nil {
				return err
			}
			if i%4 == 3 {
				if err := tx.InsertLineage(ctx, forkengine.Lineage{WorkspaceID: "ws", TargetSessionID: s.ID,
					OperationID: "l" + s.ID, SourceSessionID: "s00", ForkedAt: at(i)}); err != nil {
					return err
				}
			}
		}
		return tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: "other", ID: "s01", Visible: true, CreatedAt: at(3)})
	}))
	yes, no := true, false
	filters := map[string]forkengine.SessionFilter{
		"All": {}, "Child": {Kind: forkengine.SessionChild}, "Webhook": {Provider: "webhook"},
		"Visible": {Visible: &yes}, "Hidden": {Visible: &no}, "IncludeDeleted": {IncludeDeleted: true},
		"RootsOnly": {RootsOnly: true}, "Everything": {Kind: forkengine.SessionRoot, Provider: "simulated", Visible: &yes, IncludeDeleted: true, RootsOnly: true},
	}
	for name, f := range filters {
		for _, after := range []forkengine.PageCursor{{}, {Time: at(7), ID: "s14"}} {
			t.Run(fmt.Sprintf("%s/after%q", name, after.ID), func(t *testing.T) {
				got, err := db.ListSessions(ctx, "ws", f, after, 0)
				require.NoError(t, err)
				want := filteredInGo(t, db, f, after)
				require.Equal(t, want, got)
				if len(want) > 2 {
					page, err := db.ListSessions(ctx, "ws", f, after, 2)
					require.NoError(t, err)
					require.Equal(t, want[:2], page, "the limit keeps the first rows")
				}
			})
		}
	}
}

// filteredInGo is what ListSessions must return, computed from every session of "ws" with the
// filter's rules applied in Go.
func filteredInGo(t *testing.T, db *DB, f forkengine.SessionFilter, after forkengine.PageCursor) []forkengine.Session {
	t.Helper()
	ctx := context.Background()
	all, err := queryAll(ctx, db.queries, sessionsTable, "SELECT "+sessionSelectList+
		" FROM sessions WHERE workspace_id = 'ws' ORDER BY created_at_us, id")
	require.NoError(t, err)
	ids := make([]string, len(all))
	for i, s := range all {
		ids[i] = s.ID
	}
	forked, err := db.LineagesByTargetIDs(ctx, "ws", ids)
	require.NoError(t, err)
	want := []forkengine.Session{}
	for _, s := range all {
		_, isFork := forked[s.ID]
		switch {
		case f.Kind != "" && s.Kind != f.Kind, f.Provider != "" && s.Provider != f.Provider,
			f.Visible != nil && s.Visible != *f.Visible, !f.IncludeDeleted && s.Deleted(), f.RootsOnly && isFork:
			continue
		case !after.IsZero() && (s.CreatedAt.Before(after.Time) || s.CreatedAt.Equal(after.Time) && s.ID <= after.ID):
			continue
		}
		want = append(want, s)
	}
	return want
}
