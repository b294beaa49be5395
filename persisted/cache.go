package persisted

import (
	"container/heap"
	"container/list"
	"sync"
)

// cache is the APQ documents, partitioned by client: each client (Options.Client) has a
// least-recently-used set of its own, and looks up only in it, so a hash answers only for the
// client that registered its document: another one learns nothing from it (issue 21: a hash
// workspace A ran answered FORBIDDEN to B, any other PERSISTED_QUERY_NOT_FOUND).
//
// The whole cache is bounded by maxEntries and maxBytes. When an addition goes past a bound,
// the entry evicted is the least recently used one of the client with the largest share of the
// cache (its dominant share: the larger of its fractions of the entries and of the bytes), so a
// client that registers documents as fast as it can pushes out its own documents, not others'.
type cache struct {
	maxEntries int
	maxBytes   int

	mu      sync.Mutex
	entries int
	bytes   int
	clients map[string]*clientDocs
	shares  byShare // the clients, the largest share first
}

// clientDocs is one client's documents.
type clientDocs struct {
	key   string
	bytes int
	order *list.List // front: most recently used; values are *cacheEntry
	items map[string]*list.Element
	index int // in cache.shares
}

type cacheEntry struct{ hash, document string }

func newCache(maxEntries, maxBytes int) *cache {
	return &cache{maxEntries: maxEntries, maxBytes: maxBytes, clients: map[string]*clientDocs{},
		shares: byShare{maxEntries: int64(maxEntries), maxBytes: int64(maxBytes)}}
}

// entrySize is what an entry counts against maxBytes.
func entrySize(hash, document string) int { return len(hash) + len(document) }

// get returns the document client registered under hash.
func (c *cache) get(client, hash string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	docs := c.clients[client]
	if docs == nil {
		return "", false
	}
	el, ok := docs.items[hash]
	if !ok {
		return "", false
	}
	docs.order.MoveToFront(el)
	return el.Value.(*cacheEntry).document, true
}

// add remembers document under hash for client, evicting beyond the bounds as the type says; a
// document larger than maxBytes is not remembered.
func (c *cache) add(client, hash, document string) {
	size := entrySize(hash, document)
	if size > c.maxBytes || c.maxEntries <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	docs := c.clients[client]
	if docs == nil {
		docs = &clientDocs{key: client, order: list.New(), items: map[string]*list.Element{}}
		c.clients[client] = docs
		heap.Push(&c.shares, docs)
	}
	if el, ok := docs.items[hash]; ok {
		docs.order.MoveToFront(el)
		return
	}
	docs.items[hash] = docs.order.PushFront(&cacheEntry{hash: hash, document: document})
	docs.bytes += size
	c.entries++
	c.bytes += size
	heap.Fix(&c.shares, docs.index)
	for c.entries > c.maxEntries || c.bytes > c.maxBytes {
		c.evictLocked(c.shares.docs[0])
	}
}

// evictLocked drops the least recently used document of docs, and docs once it is empty.
func (c *cache) evictLocked(docs *clientDocs) {
	oldest := docs.order.Back()
	e := oldest.Value.(*cacheEntry)
	docs.order.Remove(oldest)
	delete(docs.items, e.hash)
	size := entrySize(e.hash, e.document)
	docs.bytes -= size
	c.entries--
	c.bytes -= size
	if docs.order.Len() == 0 {
		heap.Remove(&c.shares, docs.index)
		delete(c.clients, docs.key)
		return
	}
	heap.Fix(&c.shares, docs.index)
}

func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries
}

// byShare is a heap of clients, the largest dominant share on top. Shares are compared without
// division: entries/maxEntries against bytes/maxBytes, each scaled by maxEntries × maxBytes.
type byShare struct {
	docs                 []*clientDocs
	maxEntries, maxBytes int64
}

func (h *byShare) share(d *clientDocs) int64 {
	return max(int64(d.order.Len())*h.maxBytes, int64(d.bytes)*h.maxEntries)
}

func (h *byShare) Len() int           { return len(h.docs) }
func (h *byShare) Less(i, j int) bool { return h.share(h.docs[i]) > h.share(h.docs[j]) }
func (h *byShare) Swap(i, j int) {
	h.docs[i], h.docs[j] = h.docs[j], h.docs[i]
	h.docs[i].index, h.docs[j].index = i, j
}

// Push and Pop are container/heap's; use heap.Push and heap.Remove.
func (h *byShare) Push(x any) {
	d := x.(*clientDocs)
	d.index = len(h.docs)
	h.docs = append(h.docs, d)
}

func (h *byShare) Pop() any {
	last := h.docs[len(h.docs)-1]
	h.docs[len(h.docs)-1] = nil
	h.docs = h.docs[:len(h.docs)-1]
	return last
}
