package resolvers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fetchLog is a fetch function over even numbers that records each call's keys.
type fetchLog struct {
	mu    sync.Mutex
	calls [][]int
	fail  error
}

func (f *fetchLog) fetch(_ context.Context, keys []int) (map[int]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, append([]int(nil), keys...))
	if f.fail != nil {
		return nil, f.fail
	}
	out := map[int]string{}
	for _, k := range keys {
		if k%2 == 0 {
			out[k] = fmt.Sprint("v", k)
		}
	}
	return out, nil
}

func TestRelationFetchesHintedSiblingsOnce(t *testing.T) {
	t.Parallel()
	log := &fetchLog{}
	r := newRelation(nil, "test", log.fetch)
	r.hint(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)

	var wg sync.WaitGroup
	for k := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, ok, err := r.load(context.Background(), k)
			require.NoError(t, err)
			require.Equal(t, k%2 == 0, ok, "odd keys have no row")
			if ok {
				require.Equal(t, fmt.Sprint("v", k), v)
			}
		}()
	}
	wg.Wait()
	require.Len(t, log.calls, 1, "however the loads were scheduled")
	require.ElementsMatch(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, log.calls[0])

	_, _, err := r.load(context.Background(), 4)
	require.NoError(t, err)
	require.Len(t, log.calls, 1, "a fetched key, present or not, is answered from the response's memo")
}

func TestRelationPrimedKeysCostNothing(t *testing.T) {
	t.Parallel()
	log := &fetchLog{}
	r := newRelation(nil, "test", log.fetch)
	r.prime(map[int]string{2: "primed"})
	v, ok, err := r.load(context.Background(), 2)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "primed", v)
	require.Empty(t, log.calls)
}

func TestRelationFailureIsNotRemembered(t *testing.T) {
	t.Parallel()
	log := &fetchLog{fail: errors.New("store down")}
	r := newRelation(nil, "test", log.fetch)
	_, _, err := r.load(context.Background(), 2)
	require.ErrorContains(t, err, "store down")

	log.mu.Lock()
	log.fail = nil
	log.mu.Unlock()
	got, err := r.getMany(context.Background(), []int{2})
	require.NoError(t, err)
	require.Equal(t, map[int]string{2: "v2"}, got, "a failed fetch is retried, not cached as missing")
}

// A hinted key's batch is known before anyone asks, so its load must not wait for the loader's
// timer: with a wait of an hour, the loads below only return because they skip it.
func TestRelationHintedLoadDoesNotWaitForTheTimer(t *testing.T) {
	t.Parallel()
	log := &fetchLog{}
	r := newRelationWaiting(nil, "test", log.fetch, time.Hour)
	r.hint(0, 1, 2, 3)
	var wg sync.WaitGroup
	for k := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ok, err := r.load(context.Background(), k)
			require.NoError(t, err)
			require.Equal(t, k%2 == 0, ok)
		}()
	}
	wg.Wait()
	require.Len(t, log.calls, 1, "one fetch for the hinted batch")
	require.ElementsMatch(t, []int{0, 1, 2, 3}, log.calls[0])
}

// Loads that join a running fetch share its error instead of each reading again.
func TestRelationWaitersShareAFailedFetch(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var calls atomic.Int32
	r := newRelationWaiting(nil, "test", func(_ context.Context, keys []int) (map[int]string, error) {
		calls.Add(1)
		<-release
		return nil, errors.New("store down")
	}, time.Hour)
	r.hint(1, 2, 3)
	errs := make(chan error, 3)
	go func() {
		_, _, err := r.load(context.Background(), 1)
		errs <- err
	}()
	require.Eventually(t, func() bool { return calls.Load() == 1 }, 5*time.Second, time.Millisecond)
	for _, k := range []int{2, 3} {
		go func() {
			_, _, err := r.load(context.Background(), k)
			errs <- err
		}()
	}
	require.Eventually(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.inflight[1] != nil && r.inflight[1].waiters == 2
	}, 5*time.Second, time.Millisecond)
	close(release)
	for range 3 {
		require.ErrorContains(t, <-errs, "store down")
	}
	require.Equal(t, int32(1), calls.Load(), "the waiters joined the running fetch")
}

// Relations following one hint set fetch its keys as their own hints: each relation once, with
// the keys added since its last fetch.
func TestRelationsShareAHintSet(t *testing.T) {
	t.Parallel()
	set := newHintSet[int]()
	logA, logB := &fetchLog{}, &fetchLog{}
	a := newRelationWaiting(nil, "a", logA.fetch, time.Hour)
	b := newRelationWaiting(nil, "b", logB.fetch, time.Hour)
	a.follow(set)
	b.follow(set)
	set.add(0, 1, 2)
	_, ok, err := a.load(context.Background(), 1)
	require.NoError(t, err)
	require.False(t, ok)
	require.Len(t, logA.calls, 1)
	require.ElementsMatch(t, []int{0, 1, 2}, logA.calls[0], "the set's keys ride the first fetch")
	require.Empty(t, logB.calls, "a relation nobody asked reads nothing")

	set.add(2, 4)
	v, ok, err := a.load(context.Background(), 4)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "v4", v)
	require.Equal(t, []int{4}, logA.calls[1], "only the key added since")

	_, _, err = b.load(context.Background(), 0)
	require.NoError(t, err)
	require.Len(t, logB.calls, 1)
	require.ElementsMatch(t, []int{0, 1, 2, 4}, logB.calls[0])
}
