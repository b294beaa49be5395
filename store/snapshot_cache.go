package store

import (
	"fmt"
	"sync"

	"github.com/forkgraph/forkgraph/forkengine"
)

// snapshotCache keeps decoded operation snapshots. A fork's operation is read several times while
// it runs, and decoding its snapshot (the whole frozen transcript) dominated those reads. A stored
// snapshot never changes: it is written once with its operation and only ever deleted with it, so
// an entry stays right for as long as its operation exists. The entry also records the
// operation's snapshot hash and is used only when the row read carries the same one, so an
// operation purged and re-created under the same id by another process is not served stale data.
type snapshotCache struct {
	mu      sync.Mutex
	entries map[snapshotKey]cachedSnapshot
}

type snapshotKey struct{ workspaceID, operationID string }

// cachedSnapshot is decoded (snapshot set) or, when put by an insert, still the stored text:
// decoding is deferred to the first read, since most operations are never read with it.
type cachedSnapshot struct {
	key      snapshotKey
	hash     string
	text     string
	decoded  bool
	snapshot forkengine.Snapshot
}

// snapshotCacheSize bounds memory to a few hundred transcripts: enough for every operation in
// flight, since finished ones are rarely re-read.
const snapshotCacheSize = 256

func newSnapshotCache() *snapshotCache {
	return &snapshotCache{entries: make(map[snapshotKey]cachedSnapshot, snapshotCacheSize)}
}

// get returns a private copy of the cached snapshot of the operation, if its hash matches.
func (c *snapshotCache) get(workspaceID, operationID, hash string) (forkengine.Snapshot, bool, error) {
	c.mu.Lock()
	hit, ok := c.entries[snapshotKey{workspaceID, operationID}]
	c.mu.Unlock()
	if !ok || hit.hash != hash {
		return forkengine.Snapshot{}, false, nil
	}
	if !hit.decoded {
		s, err := decodeSnapshot(hit.text)
		if err != nil {
			return forkengine.Snapshot{}, false, fmt.Errorf("decode snapshot of operation %s: %w", operationID, err)
		}
		hit.snapshot, hit.decoded, hit.text = s, true, ""
		c.put(hit)
	}
	return copySnapshot(hit.snapshot), true, nil
}

// put stores entries; the cache owns their snapshots from now on.
func (c *snapshotCache) put(entries ...cachedSnapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range entries {
		if _, present := c.entries[e.key]; !present && len(c.entries) >= snapshotCacheSize {
			for victim := range c.entries { // map order is random: a cheap random eviction
				delete(c.entries, victim)
				break
			}
		}
		c.entries[e.key] = e
	}
}

// copySnapshot deep-copies s, so callers may change what they get.
func copySnapshot(s forkengine.Snapshot) forkengine.Snapshot { return s.Clone() }
