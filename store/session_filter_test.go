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
	db := openTest(t, sqliteConfig(t))
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
				var rows []sessionRow
				require.NoError(t, keyset(filterSessions(db.gorm.WithContext(ctx), "ws", f), after).
					Order("created_at_us, id").Find(&rows).Error)
				want := make([]forkengine.Session, len(rows))
				for i, r := range rows {
					want[i] = r.domain()
				}
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
