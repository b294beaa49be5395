package store

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

func decodedSnapshot(t *testing.T, title string) forkengine.Snapshot {
	t.Helper()
	raw, err := json.Marshal(forkengine.Snapshot{
		Version: 1,
		Session: forkengine.Session{ID: "s", Title: title, Settings: json.RawMessage(`{"a":1}`)},
		Turns:   []forkengine.Turn{{ID: "t1", ProviderTurnBinding: json.RawMessage(`{"b":2}`)}},
	})
	require.NoError(t, err)
	s, err := decodeSnapshot(string(raw))
	require.NoError(t, err)
	return s
}

func TestSnapshotCacheNeverServesStaleOrSharedData(t *testing.T) {
	t.Parallel()
	c := newSnapshotCache()
	key := snapshotKey{"ws", "op"}
	c.put(cachedSnapshot{key: key, hash: "h1", decoded: true, snapshot: decodedSnapshot(t, "one")})
	first, ok, err := c.get("ws", "op", "h1")
	require.NoError(t, err)
	require.True(t, ok)
	first.Turns[0].ID = "mutated by the caller"
	first.Session.Settings[1] = 'X'

	again, ok, err := c.get("ws", "op", "h1")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "t1", again.Turns[0].ID, "a caller's change does not reach the cache")
	require.JSONEq(t, `{"a":1}`, string(again.Session.Settings))

	_, ok, _ = c.get("ws", "op", "h2")
	require.False(t, ok, "a row with another snapshot hash is not served the cached snapshot")
	_, ok, _ = c.get("other", "op", "h1")
	require.False(t, ok, "entries are per workspace")
}

func TestSnapshotCacheDecodesInsertedTextOnFirstRead(t *testing.T) {
	t.Parallel()
	c := newSnapshotCache()
	raw, err := json.Marshal(forkengine.Snapshot{Version: 1, Session: forkengine.Session{ID: "s", Title: "lazy"}})
	require.NoError(t, err)
	c.put(cachedSnapshot{key: snapshotKey{"ws", "op"}, hash: "h", text: string(raw)})
	got, ok, err := c.get("ws", "op", "h")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "lazy", got.Session.Title)
	require.True(t, c.entries[snapshotKey{"ws", "op"}].decoded, "decoded once, then kept decoded")

	c.put(cachedSnapshot{key: snapshotKey{"ws", "bad"}, hash: "h", text: "{"})
	_, _, err = c.get("ws", "bad", "h")
	require.Error(t, err)
}

func TestSnapshotCacheStaysBounded(t *testing.T) {
	t.Parallel()
	c := newSnapshotCache()
	s := decodedSnapshot(t, "x")
	for i := range 3 * snapshotCacheSize {
		c.put(cachedSnapshot{key: snapshotKey{"ws", fmt.Sprint(i)}, hash: "h", decoded: true, snapshot: copySnapshot(s)})
	}
	require.Len(t, c.entries, snapshotCacheSize)
}
