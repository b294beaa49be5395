package resolvers

import (
	"context"
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
// relation and depth, never one per row. Fetches of one relation are serialised by mu so two
// batches never read the same keys twice.
type relation[K comparable, V any] struct {
	name    string
	observe BatchObserver
	fetch   func(ctx context.Context, keys []K) (map[K]V, error)
	loader  *dataloadgen.Loader[K, found[V]]

	mu     sync.Mutex
	done   map[K]bool // fetched (present or not)
	values map[K]V

	// Hints have their own lock: a fetch of one relation may hint another whose fetch is running.
	hintMu sync.Mutex
	hinted map[K]bool
	order  []K
}

func newRelation[K comparable, V any](observe BatchObserver, name string, fetch func(ctx context.Context, keys []K) (map[K]V, error)) *relation[K, V] {
	r := &relation[K, V]{name: name, observe: observe, fetch: fetch, done: map[K]bool{}, values: map[K]V{}, hinted: map[K]bool{}}
	r.loader = dataloadgen.NewLoader(r.batch, dataloadgen.WithWait(loaderWait))
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

// takeHints returns the hinted keys and forgets them.
func (r *relation[K, V]) takeHints() []K {
	r.hintMu.Lock()
	defer r.hintMu.Unlock()
	keys := r.order
	r.order, r.hinted = nil, map[K]bool{}
	return keys
}

// prime stores values the response already holds (a listed page), so asking for them costs nothing.
func (r *relation[K, V]) prime(values map[K]V) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, v := range values {
		r.done[k], r.values[k] = true, v
	}
}

// load returns the value of one key and whether it exists.
func (r *relation[K, V]) load(ctx context.Context, key K) (V, bool, error) {
	r.mu.Lock()
	if r.done[key] {
		v, ok := r.values[key]
		r.mu.Unlock()
		return v, ok, nil
	}
	r.mu.Unlock()
	f, err := r.loader.Load(ctx, key)
	return f.value, f.ok, err
}

// getMany returns the values of keys (missing rows are absent), fetching every key and hinted key
// not fetched yet in one call.
func (r *relation[K, V]) getMany(ctx context.Context, keys []K) (map[K]V, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.fetchMissingLocked(ctx, keys); err != nil {
		return nil, err
	}
	out := make(map[K]V, len(keys))
	for _, k := range keys {
		if v, ok := r.values[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}

func (r *relation[K, V]) fetchMissingLocked(ctx context.Context, keys []K) error {
	var missing []K
	seen := map[K]bool{}
	for _, k := range append(append([]K(nil), keys...), r.takeHints()...) {
		if !r.done[k] && !seen[k] {
			seen[k] = true
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	ctx, done := r.observe.start(ctx, r.name, len(missing))
	values, err := r.fetch(ctx, missing)
	done(err)
	if err != nil {
		return err
	}
	for _, k := range missing {
		r.done[k] = true
		if v, ok := values[k]; ok {
			r.values[k] = v
		}
	}
	return nil
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
