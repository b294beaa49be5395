package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// A part of a kind this server does not know (a row a newer server wrote) is never presented:
// the read fails closed with typed_reference_unknown instead of passing a reference no fork
// could map.
func testUnknownStoredPartKindFailsClosed(t *testing.T, cfg Config) {
	ctx := context.Background()
	db := openTest(t, cfg)
	require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error {
		if err := tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: "ws", ID: "s"}); err != nil {
			return err
		}
		if err := tx.UpsertTurn(ctx, forkengine.Turn{WorkspaceID: "ws", SessionID: "s", ID: "t", Sequence: 1}); err != nil {
			return err
		}
		_, err := tx.InsertMessages(ctx, []forkengine.Message{{WorkspaceID: "ws", SessionID: "s", TurnID: "t", ID: "m",
			Role: forkengine.RoleTool, Content: "x", Parts: []forkengine.MessagePart{{Kind: "future_kind", CallID: "c"}}}})
		return err
	}))
	_, err := db.MessagesByIDs(ctx, "ws", []string{"m"})
	require.Equal(t, forkengine.ReasonTypedReferenceUnknown, forkengine.ErrorReason(err))
}

func TestUnknownStoredPartKindFailsClosedSQLite(t *testing.T) {
	t.Parallel()
	testUnknownStoredPartKindFailsClosed(t, sqliteConfig(t))
}

func TestUnknownStoredPartKindFailsClosedPostgres(t *testing.T) {
	requirePostgres(t)
	testUnknownStoredPartKindFailsClosed(t, postgresConfig(t))
}
