package resolvers

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/vikstrous/dataloadgen"
)

// loaderWait is how long a dataloadgen batch collects keys before it runs. Hints (below) make the
// batches of a response independent of this timing; the wait only groups keys nobody hinted.
const loaderWait = 2 * time.Millisecond

// BatchObserver, when set in Config.Batch, is called before every batch read of a loader with
// the loader's name (a fixed set: sessions, turns, forkability, ...) and the number of keys it
// reads. It returns the context the read runs in (e.g. with a span) and a function called with
// the read's error when it ends.
type BatchObserver func(ctx context.Context, loader string, keys int) (context.Context, func(error))

func (o BatchObserver) start(ctx context.Context, loader string, keys int) (context.Context, func(error)) {
	if o == nil {
		return ctx, func(error) {}
	}
	return o(ctx, loader, keys)
}

// found carries a loaded value and whether the row exists, so a missing row is data (a GraphQL
// null), not an error.
type found[V any] struct {
	value V
	ok    bool
}

// relation is one batched read of one response: a dataloadgen loader plus a memo of what the
// response already fetched and a set of hinted sibling keys.
//
// Hints make batching deterministic: when a list is loaded (a page of sessions, the latest turns of
// those sessions, ...), the keys its children will ask for are hinted, and the first fetch of the
// relation takes every hinted key along. A key asked for later is answered from the memo without
// SQL, however the goroutines of the response were scheduled. So a query costs one statement per
// relation and depth, never one per row.
//
// Hints also make the loader's wait unnecessary: the batch a hinted key belongs to is complete
// before anyone asks, so the first load of a hinted key fetches it at once instead of waiting
// loaderWait for siblings that are already known (the wait was one loaderWait per level of the
// query, most of a list query's latency). Only keys nobody hinted go through dataloadgen's timer.
// A key being fetched is never fetched twice: a load or batch that needs it waits for the fetch
// already reading it (inflight) and shares its result or error.
type relation[K comparable, V any] struct {
	name    string
	observe BatchObserver
	fetch   func(ctx context.Context, keys []K) (map[K]V, error)
	loader  *dataloadgen.Loader[K, found[V]]

	mu       sync.Mutex
	done     map[K]bool // fetched (present or not)
	values   map[K]V
	inflight map[K]*fetchCall

	// Hints have their own lock: a fetch of one relation may hint another whose fetch is running.
	hintMu sync.Mutex
	hinted map[K]bool
	order  []K
	// follows are hint sets shared with other relations (follow); taken[i] is how many keys of
	// follows[i] this relation has taken.
	follows []*hintSet[K]
	taken   []int
}

// hintSet is a growing set of keys hinted to several relations at once: the sessions of a page
// are the keys of seven relations, most of which the query never asks for. Each relation takes
// the keys added since it last took them, so hinting costs one set for all of them.
type hintSet[K comparable] struct {
	mu   sync.Mutex
	keys []K
	has  map[K]bool
}

func newHintSet[K comparable]() *hintSet[K] { return &hintSet[K]{has: map[K]bool{}} }

func (h *hintSet[K]) add(keys ...K) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.keys) == 0 { // the first keys (a page's) size the set
		h.keys, h.has = make([]K, 0, len(keys)), make(map[K]bool, len(keys))
	}
	for _, k := range keys {
		if !h.has[k] {
			h.has[k] = true
			h.keys = append(h.keys, k)
		}
	}
}

func (h *hintSet[K]) contains(k K) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.has[k]
}

// since returns the keys after the first n and how many there are now.
func (h *hintSet[K]) since(n int) ([]K, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.keys[n:len(h.keys):len(h.keys)], len(h.keys)
}

// follow makes every key of h a hint of r too.
func (r *relation[K, V]) follow(h *hintSet[K]) {
	r.hintMu.Lock()
	defer r.hintMu.Unlock()
	r.follows, r.taken = append(r.follows, h), append(r.taken, 0)
}

var errFetchPanicked = errors.New("batch read panicked")

// fetchCall is one running fetch; done closes when it ended, with err its error.
type fetchCall struct {
	done    chan struct{}
	err     error
	waiters int // loads and batches waiting for it besides the one running it (under relation.mu)
}

// newRelation builds a relation that reads with fetch. fetch returns a map of its own (the
// relation may keep it as its memo) holding the keys that exist.
func newRelation[K comparable, V any](observe BatchObserver, name string, fetch func(ctx context.Context, keys []K) (map[K]V, error)) *relation[K, V] {
	return newRelationWaiting(observe, name, fetch, loaderWait)
}

// newRelationWaiting is newRelation with dataloadgen waiting wait for unhinted keys.
func newRelationWaiting[K comparable, V any](observe BatchObserver, name string, fetch func(ctx context.Context, keys []K) (map[K]V, error), wait time.Duration) *relation[K, V] {
	r := &relation[K, V]{name: name, observe: observe, fetch: fetch, done: map[K]bool{}, values: map[K]V{},
		inflight: map[K]*fetchCall{}, hinted: map[K]bool{}}
	r.loader = dataloadgen.NewLoader(r.batch, dataloadgen.WithWait(wait))
	return r
}

// hint records keys the response is likely to ask for; they are fetched with the next batch.
func (r *relation[K, V]) hint(keys ...K) {
	r.hintMu.Lock()
	defer r.hintMu.Unlock()
	for _, k := range keys {
		if !r.hinted[k] {
			r.hinted[k] = true
			r.order = append(r.order, k)
		}
	}
}

// isHinted reports whether k was hinted, to r or to a set it follows (a key of a followed set
// stays hinted once taken: by then it is fetched, being fetched, or failed and fetched again).
func (r *relation[K, V]) isHinted(k K) bool {
	r.hintMu.Lock()
	defer r.hintMu.Unlock()
	if r.hinted[k] {
		return true
	}
	for _, h := range r.follows {
		if h.contains(k) {
			return true
		}
	}
	return false
}

// takeHints returns the keys hinted since the last call, its own and its followed sets'.
func (r *relation[K, V]) takeHints() []K {
	r.hintMu.Lock()
	defer r.hintMu.Unlock()
	keys := r.order
	r.order, r.hinted = nil, map[K]bool{}
	for i, h := range r.follows {
		var more []K
		more, r.taken[i] = h.since(r.taken[i])
		keys = append(keys, more...)
	}
	return keys
}

// prime stores values the response already holds (a listed page), so asking for them costs nothing.
// values must be the caller's own map: the first prime keeps it as the memo (as run does with a
// first batch) instead of copying a page into a new one.
func (r *relation[K, V]) prime(values map[K]V) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.done) == 0 {
		r.done = make(map[K]bool, len(values))
		if len(r.values) == 0 {
			r.values = values
		}
	}
	for k, v := range values {
		r.done[k], r.values[k] = true, v
	}
}

// load returns the value of one key and whether it exists. A fetched key comes from the memo; a
// hinted or inflight one is fetched (or waited for) now; any other waits for dataloadgen's batch.
func (r *relation[K, V]) load(ctx context.Context, key K) (V, bool, error) {
	r.mu.Lock()
	if r.done[key] {
		v, ok := r.values[key]
		r.mu.Unlock()
		return v, ok, nil
	}
	_, running := r.inflight[key]
	r.mu.Unlock()
	if running || r.isHinted(key) {
		if err := r.ensure(ctx, []K{key}); err != nil {
			var zero V
			return zero, false, err
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		v, ok := r.values[key]
		return v, ok, nil
	}
	f, err := r.loader.Load(ctx, key)
	return f.value, f.ok, err
}

// getMany returns the values of keys (missing rows are absent), fetching every key and hinted key
// not fetched yet in one call.
func (r *relation[K, V]) getMany(ctx context.Context, keys []K) (map[K]V, error) {
	if err := r.ensure(ctx, keys); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[K]V, len(keys))
	for _, k := range keys {
		if v, ok := r.values[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}

// ensure fetches, in one call, every key and hinted key that is neither fetched nor being fetched,
// then waits for the fetches already reading the others. A failed fetch is not remembered: its
// keys are read again when next asked for.
func (r *relation[K, V]) ensure(ctx context.Context, keys []K) error {
	r.mu.Lock()
	var missing []K
	var waits []*fetchCall
	var call *fetchCall // this call's fetch; its keys are inflight as soon as they are seen,
	// which also skips a key listed twice (no set of seen keys, no joined copy of the lists)
	hints := r.takeHints()
	for _, list := range [2][]K{keys, hints} {
		for _, k := range list {
			if r.done[k] {
				continue
			}
			if c, ok := r.inflight[k]; ok {
				if c != call && !slices.Contains(waits, c) {
					c.waiters++
					waits = append(waits, c)
				}
				continue
			}
			if call == nil {
				call = &fetchCall{done: make(chan struct{})}
				missing = make([]K, 0, len(keys)+len(hints))
			}
			r.inflight[k] = call
			missing = append(missing, k)
		}
	}
	r.mu.Unlock()
	if call != nil {
		r.run(ctx, call, missing)
		if call.err != nil {
			return call.err
		}
	}
	for _, c := range waits {
		<-c.done
		if c.err != nil {
			return c.err
		}
	}
	return nil
}

// run fetches keys for call and records the result before anyone waiting on call is released.
func (r *relation[K, V]) run(ctx context.Context, call *fetchCall, keys []K) {
	defer close(call.done)
	call.err = errFetchPanicked // until the fetch returns
	ctx, finish := r.observe.start(ctx, r.name, len(keys))
	values, err := r.fetch(ctx, keys)
	finish(err)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil && len(r.done) == 0 {
		// The first batch (usually the only one) sizes the memo and lends it its map: fetch
		// returns a map of its own (newRelation), so it is kept instead of copied.
		r.done = make(map[K]bool, len(keys))
		if values != nil {
			r.values = values
		}
	}
	for _, k := range keys {
		delete(r.inflight, k)
		if err == nil {
			r.done[k] = true
			if v, ok := values[k]; ok {
				r.values[k] = v
			}
		}
	}
	call.err = err
}

// batch is the dataloadgen fetch function.
func (r *relation[K, V]) batch(ctx context.Context, keys []K) ([]found[V], []error) {
	values, err := r.getMany(ctx, keys)
	out := make([]found[V], len(keys))
	if err != nil {
		errs := make([]error, len(keys))
		for i := range errs {
			errs[i] = err
		}
		return out, errs
	}
	for i, k := range keys {
		v, ok := values[k]
		out[i] = found[V]{value: v, ok: ok}
	}
	return out, nil
}
