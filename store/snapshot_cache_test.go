package store

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

func encodedSnapshot(t *testing.T, title string) string {
	t.Helper()
	raw, err := json.Marshal(forkengine.Snapshot{
		Version: 1,
		Session: forkengine.Session{ID: "s", Title: title, Settings: json.RawMessage(`{"a":1}`)},
		Turns:   []forkengine.Turn{{ID: "t1", ProviderTurnBinding: json.RawMessage(`{"b":2}`)}},
	})
	require.NoError(t, err)
	return string(raw)
}

func TestSnapshotCacheNeverServesStaleOrSharedData(t *testing.T) {
	c := newSnapshotCache()
	first, err := c.decode("ws", "op", encodedSnapshot(t, "one"))
	require.NoError(t, err)
	first.Turns[0].ID = "mutated by the caller"
	first.Session.Settings[1] = 'X'

	again, err := c.decode("ws", "op", encodedSnapshot(t, "one"))
	require.NoError(t, err)
	require.Equal(t, "t1", again.Turns[0].ID, "a caller's change does not reach the cache")
	require.JSONEq(t, `{"a":1}`, string(again.Session.Settings))

	changed, err := c.decode("ws", "op", encodedSnapshot(t, "two"))
	require.NoError(t, err)
	require.Equal(t, "two", changed.Session.Title, "new text is decoded again")
}

func TestSnapshotCacheStaysBounded(t *testing.T) {
	c := newSnapshotCache()
	text := encodedSnapshot(t, "x")
	for i := range 3 * snapshotCacheSize {
		_, err := c.decode("ws", fmt.Sprint(i), text)
		require.NoError(t, err)
	}
	require.Len(t, c.entries, snapshotCacheSize)
}
