package store

import (
	"encoding/json"
	"sync"

	"github.com/forkgraph/forkgraph/forkengine"
)

// snapshotCache memoises decoding of operation snapshots. A fork's operation is read several
// times while it runs and its snapshot (the whole frozen transcript) never changes, so decoding
// the same JSON again dominated those reads. An entry is used only when the stored text is
// byte-for-byte the text it was decoded from, so the cache can never return stale data; the
// (workspace, operation) key only bounds it to one entry per operation.
type snapshotCache struct {
	mu      sync.Mutex
	entries map[snapshotKey]decodedSnapshot
}

type snapshotKey struct{ workspaceID, operationID string }

type decodedSnapshot struct {
	text     string
	snapshot forkengine.Snapshot
}

// snapshotCacheSize bounds memory to a few hundred transcripts: enough for every operation in
// flight, since finished ones are rarely re-read.
const snapshotCacheSize = 256

func newSnapshotCache() *snapshotCache {
	return &snapshotCache{entries: make(map[snapshotKey]decodedSnapshot, snapshotCacheSize)}
}

// decode returns a private copy of the snapshot encoded in text.
func (c *snapshotCache) decode(workspaceID, operationID, text string) (forkengine.Snapshot, error) {
	key := snapshotKey{workspaceID, operationID}
	c.mu.Lock()
	hit, ok := c.entries[key]
	c.mu.Unlock()
	if ok && hit.text == text {
		return copySnapshot(hit.snapshot), nil
	}
	var s forkengine.Snapshot
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		return s, err
	}
	dropSnapshotNulls(&s)
	c.mu.Lock()
	if _, present := c.entries[key]; !present && len(c.entries) >= snapshotCacheSize {
		for victim := range c.entries { // map order is random: a cheap random eviction
			delete(c.entries, victim)
			break
		}
	}
	c.entries[key] = decodedSnapshot{text: text, snapshot: s}
	c.mu.Unlock()
	return copySnapshot(s), nil
}

// copySnapshot deep-copies s, so callers may change what they get.
func copySnapshot(s forkengine.Snapshot) forkengine.Snapshot {
	s.Session.Settings = cloneRaw(s.Session.Settings)
	s.Session.DeletedAt = cloneTime(s.Session.DeletedAt)
	if s.Turns != nil {
		turns := make([]forkengine.Turn, len(s.Turns))
		for i, t := range s.Turns {
			t.SettledAt = cloneTime(t.SettledAt)
			t.ProviderTurnBinding = cloneRaw(t.ProviderTurnBinding)
			turns[i] = t
		}
		s.Turns = turns
	}
	if s.Messages != nil {
		s.Messages = append([]forkengine.Message(nil), s.Messages...)
	}
	return s
}

func cloneRaw(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	return append(json.RawMessage{}, raw...)
}

func cloneTime[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
