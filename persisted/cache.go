package persisted

import (
	"container/list"
	"sync"
)

// cache is a least-recently-used map of hash → document bounded by entries and by bytes, so a
// client registering large documents cannot hold more memory than MaxBytes.
type cache struct {
	maxEntries int
	maxBytes   int

	mu    sync.Mutex
	bytes int
	order *list.List // front: most recently used; values are *cacheEntry
	items map[string]*list.Element
}

type cacheEntry struct{ hash, document string }

func newCache(maxEntries, maxBytes int) *cache {
	return &cache{maxEntries: maxEntries, maxBytes: maxBytes, order: list.New(), items: map[string]*list.Element{}}
}

func (c *cache) get(hash string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[hash]
	if !ok {
		return "", false
	}
	c.order.MoveToFront(el)
	return el.Value.(*cacheEntry).document, true
}

// add remembers document under hash, evicting the least recently used entries beyond the
// bounds; a document larger than maxBytes is not remembered.
func (c *cache) add(hash, document string) {
	size := len(hash) + len(document)
	if size > c.maxBytes || c.maxEntries <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[hash]; ok {
		c.order.MoveToFront(el)
		return
	}
	c.items[hash] = c.order.PushFront(&cacheEntry{hash: hash, document: document})
	c.bytes += size
	for c.order.Len() > c.maxEntries || c.bytes > c.maxBytes {
		oldest := c.order.Back()
		e := oldest.Value.(*cacheEntry)
		c.order.Remove(oldest)
		delete(c.items, e.hash)
		c.bytes -= len(e.hash) + len(e.document)
	}
}

func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
