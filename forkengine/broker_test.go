package forkengine_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

func brokerEvents(ws string, from, n int) []forkengine.Event {
	events := make([]forkengine.Event, n)
	for i := range events {
		events[i] = forkengine.Event{Cursor: int64(from + i), WorkspaceID: ws, Kind: forkengine.EventTurnUpserted}
	}
	return events
}

// receivedShared returns every event queued on a shared subscription until its channel closes.
func receivedShared(sub *forkengine.Subscription) []int64 {
	var cursors []int64
	for ev := range sub.Events() {
		cursors = append(cursors, ev.Cursor)
	}
	return cursors
}

func TestBrokerOverflowClosesWithResumeRequired(t *testing.T) {
	t.Parallel()
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			b := forkengine.NewBroker(4)
			sub := b.Subscribe("ws")
			if shared {
				sub = b.SubscribeShared("ws")
			}
			b.Publish(brokerEvents("ws", 1, 3))
			b.Publish(brokerEvents("ws", 4, 3)) // the 5th event does not fit

			var got []int64
			if shared {
				got = receivedShared(sub)
			} else {
				for ev := range sub.C() {
					got = append(got, ev.Cursor)
				}
			}
			require.Equal(t, []int64{1, 2, 3, 4}, got, "the queued events are delivered, then the channel closes")
			require.Equal(t, forkengine.CodeResumeRequired, forkengine.ErrorCode(sub.Err()))
			require.Zero(t, b.Subscribers(), "a lagged subscriber is unregistered")
		})
	}
}

func TestBrokerNoSendAfterClose(t *testing.T) {
	t.Parallel()
	b := forkengine.NewBroker(4)
	plain, shared := b.Subscribe("ws"), b.SubscribeShared("ws")
	plain.Close()
	shared.Close()
	shared.Close()                      // closing twice is harmless
	b.Publish(brokerEvents("ws", 1, 2)) // must not panic on a closed channel

	_, open := <-plain.C()
	require.False(t, open)
	require.Empty(t, receivedShared(shared))
	require.NoError(t, plain.Err(), "a closed subscription has no error")
	require.NoError(t, shared.Err())
	require.Zero(t, b.Subscribers())
}

func TestBrokerSharedSubscribersShareOneCopy(t *testing.T) {
	t.Parallel()
	b := forkengine.NewBroker(0)
	first, second, other := b.SubscribeShared("ws"), b.SubscribeShared("ws"), b.SubscribeShared("elsewhere")
	events := brokerEvents("ws", 7, 1)
	b.Publish(events)
	events[0].Cursor = 99 // the publisher may reuse its slice

	a, c := <-first.Events(), <-second.Events()
	require.Same(t, a, c, "one copy per published event")
	require.Equal(t, int64(7), a.Cursor, "subscribers hold a copy, not the publisher's slice")
	require.Empty(t, other.Events(), "another workspace's subscriber gets nothing")
}

// TestBrokerConcurrentPublishAndClose is for the race detector: publishers, closers and
// receivers run at once, and no send may reach a closed channel.
func TestBrokerConcurrentPublishAndClose(t *testing.T) {
	t.Parallel()
	b := forkengine.NewBroker(8)
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Go(func() {
			for i := range 200 {
				b.Publish(brokerEvents("ws", p*1000+i, 2))
			}
		})
	}
	for i := range 50 {
		var sub *forkengine.Subscription
		if i%2 == 0 {
			sub = b.SubscribeShared("ws")
		} else {
			sub = b.Subscribe("ws")
		}
		wg.Go(func() {
			if i%2 == 0 {
				for range sub.Events() {
				}
				return
			}
			for range sub.C() {
			}
		})
		wg.Go(sub.Close)
	}
	wg.Wait()
	require.Zero(t, b.Subscribers())
}

func TestBrokerSubscribeFunc(t *testing.T) {
	t.Parallel()
	b := forkengine.NewBroker(0)
	var got []int64
	var ends []error
	room := 3
	sub := b.SubscribeFunc("ws", func(ev *forkengine.Event) bool {
		if room == 0 {
			return false
		}
		room--
		got = append(got, ev.Cursor)
		return true
	}, func(err error) { ends = append(ends, err) })
	b.Publish(brokerEvents("elsewhere", 1, 1))
	b.Publish(brokerEvents("ws", 2, 2))
	require.Equal(t, []int64{2, 3}, got, "delivered in order, other workspaces filtered")
	require.Empty(t, ends)

	b.Publish(brokerEvents("ws", 4, 3)) // the consumer takes one more, then refuses
	require.Equal(t, []int64{2, 3, 4}, got, "nothing is delivered after the refusal")
	require.Len(t, ends, 1)
	require.Equal(t, forkengine.CodeResumeRequired, forkengine.ErrorCode(ends[0]))
	require.Equal(t, forkengine.CodeResumeRequired, forkengine.ErrorCode(sub.Err()))

	sub.Close()
	b.Publish(brokerEvents("ws", 7, 1))
	require.Len(t, ends, 1, "ended is called once")
	require.Len(t, got, 3)
	require.Zero(t, b.Subscribers())
}

func TestBrokerSubscribeFuncCloseEndsWithoutError(t *testing.T) {
	t.Parallel()
	b := forkengine.NewBroker(0)
	var ends []error
	sub := b.SubscribeFunc("", func(*forkengine.Event) bool { return true }, func(err error) { ends = append(ends, err) })
	sub.Close()
	sub.Close()
	require.Equal(t, []error{nil}, ends)
}

// Publish matches subscribers by workspace handle: each gets its workspace's events only, an
// every-workspace subscriber gets all, whatever string the ids were built from.
func TestBrokerDeliversByWorkspace(t *testing.T) {
	t.Parallel()
	b := forkengine.NewBroker(8)
	a := b.SubscribeShared(string([]byte("ws-a"))) // a copy: not the events' string
	other := b.SubscribeShared("ws-b")
	all := b.SubscribeShared("")
	defer a.Close()
	defer other.Close()
	defer all.Close()
	b.Publish([]forkengine.Event{{WorkspaceID: "ws-a", Cursor: 1}, {WorkspaceID: "ws-b", Cursor: 2}, {WorkspaceID: "ws-a", Cursor: 3}})
	cursors := func(s *forkengine.Subscription) []int64 {
		var got []int64
		for len(s.Events()) > 0 {
			got = append(got, (<-s.Events()).Cursor)
		}
		return got
	}
	require.Equal(t, []int64{1, 3}, cursors(a))
	require.Equal(t, []int64{2}, cursors(other))
	require.Equal(t, []int64{1, 2, 3}, cursors(all))
}
