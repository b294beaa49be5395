package forkengine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// feedFixture is an engine whose events reach subscribers only through a Feed, as in the server.
type feedFixture struct {
	t      *testing.T
	store  *hookStore
	broker *forkengine.Broker
	feed   *forkengine.Feed
	engine *forkengine.Engine
}

// hookStore lets a test act in the middle of a replay read.
type hookStore struct {
	*forkenginetest.MemStore
	mu           sync.Mutex
	reads        int
	beforeReplay func(read int) // runs before each replay read, with its number (1 for the first)
}

func (s *hookStore) EventsAfter(ctx context.Context, ws string, after int64, limit int) ([]forkengine.Event, error) {
	s.mu.Lock()
	s.reads++
	hook, read := s.beforeReplay, s.reads
	s.mu.Unlock()
	if hook != nil {
		hook(read)
	}
	return s.MemStore.EventsAfter(ctx, ws, after, limit)
}

// countedLog counts the feed's reads of the log.
type countedLog struct {
	*forkenginetest.MemStore
	mu    sync.Mutex
	reads int
}

func (l *countedLog) LogEventsAfter(ctx context.Context, after int64, limit int) ([]forkengine.Event, error) {
	l.mu.Lock()
	l.reads++
	l.mu.Unlock()
	return l.MemStore.LogEventsAfter(ctx, after, limit)
}

func (l *countedLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reads
}

// newFeedFixture builds the fixture; the engine's feed reads the store's log, through log when
// given.
func newFeedFixture(t *testing.T, cfg forkengine.EventsConfig, log ...*countedLog) *feedFixture {
	t.Helper()
	f := &feedFixture{t: t, store: &hookStore{MemStore: forkenginetest.NewMemStore()}}
	cfg.Log = f.store.MemStore
	if cfg.QueueSize == 0 {
		cfg.QueueSize = 4096
	}
	for _, l := range log {
		l.MemStore = f.store.MemStore
		cfg.Log = l
	}
	var err error
	f.engine, err = forkengine.New(forkengine.Config{Store: f.store, Events: cfg, NoBackground: true})
	require.NoError(t, err)
	f.broker, f.feed = f.engine.Broker(), f.engine.Feed()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	require.NoError(t, f.engine.StartEvents(ctx))
	return f
}

// follow follows the fixture's workspace from a position, each event presented as its cursor.
func (f *feedFixture) follow(ctx context.Context, from forkengine.WorkspacePosition) (*forkengine.Stream[int64], error) {
	return forkengine.NewWorkspaceStreams(f.engine, cursorOf).Follow(ctx, ws, from)
}

func (f *feedFixture) report(id, title string) {
	f.t.Helper()
	_, err := f.engine.ReportSession(context.Background(), forkengine.SessionReport{WorkspaceID: ws, ID: id, Provider: provider, Title: &title})
	require.NoError(f.t, err)
}

// waitDelivered waits until the feed has handed the broker every logged event.
func (f *feedFixture) waitDelivered() {
	f.t.Helper()
	require.Eventually(f.t, func() bool {
		head, err := f.store.LogHead(context.Background())
		return err == nil && f.feed.Position() == head
	}, 5*time.Second, time.Millisecond)
}

func collect(t *testing.T, s *forkengine.Stream[int64], n int) []int64 {
	t.Helper()
	out := make([]int64, 0, n)
	for len(out) < n {
		select {
		case c, ok := <-s.C:
			require.True(t, ok, "stream ended after %v: %v", out, s.Err())
			out = append(out, c)
		case <-time.After(5 * time.Second):
			t.Fatalf("got %v, want %d events", out, n)
		}
	}
	return out
}

func cursorOf(ev *forkengine.Event) int64 { return ev.Cursor }

// TestReplaySeamSendsAnEventCommittedDuringTheReplayOnce: the stream replays the backlog, then
// subscribes and replays again from there; an event committed while that second page is read
// reaches the subscriber twice, in the page and live, and the seam keeps one.
func TestReplaySeamSendsAnEventCommittedDuringTheReplayOnce(t *testing.T) {
	t.Parallel()
	f := newFeedFixture(t, forkengine.EventsConfig{})
	f.report("s1", "one")
	f.waitDelivered()
	f.store.mu.Lock()
	f.store.beforeReplay = func(read int) {
		if read == 2 { // the pass after subscribing
			f.report("s1", "two") // cursor 2: queued live before the page that holds it is read
			f.waitDelivered()
		}
	}
	f.store.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := f.follow(ctx, forkengine.WorkspacePosition{Resume: true})
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2}, collect(t, s, 2))
	f.report("s1", "three")
	require.Equal(t, []int64{3}, collect(t, s, 1), "after the seam: the next live event, and no second 2")
	require.Equal(t, int64(3), s.LastCursor())
}

// TestFeedDeliversInLogOrderUnderConcurrentWriters: many writers commit and publish at once;
// a live subscriber sees the log's order, with no gap and no duplicate.
func TestFeedDeliversInLogOrderUnderConcurrentWriters(t *testing.T) {
	t.Parallel()
	f := newFeedFixture(t, forkengine.EventsConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := f.follow(ctx, forkengine.WorkspacePosition{})
	require.NoError(t, err)
	const writers, each = 8, 40
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				f.report(fmt.Sprintf("s%d", w), fmt.Sprintf("title %d", i))
			}
		})
	}
	wg.Wait()
	got := collect(t, s, writers*each)
	for i := range got {
		require.Equal(t, int64(i+1), got[i], "event %d", i)
	}
}

// TestFeedWakesOnAnotherProcessesCommitAndPollsWithoutOne: commits this process did not make
// (another instance's) reach subscribers through Wake, and at the next poll when no wake-up comes.
func TestFeedWakesOnAnotherProcessesCommitAndPollsWithoutOne(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]func(chan struct{}) forkengine.EventsConfig{
		"Wake": func(wake chan struct{}) forkengine.EventsConfig {
			return forkengine.EventsConfig{Wake: wake, Poll: time.Hour}
		},
		"Poll": func(chan struct{}) forkengine.EventsConfig {
			return forkengine.EventsConfig{Poll: 5 * time.Millisecond}
		},
	} {
		t.Run(name, func(t *testing.T) {
			wake := make(chan struct{}, 1)
			f := newFeedFixture(t, cfg(wake))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s, err := f.follow(ctx, forkengine.WorkspacePosition{})
			require.NoError(t, err)
			// A write that bypasses this engine, as another instance's would.
			require.NoError(t, f.store.Update(ctx, func(tx forkengine.Tx) error {
				_, err := tx.AppendEvents(ctx, []forkengine.Event{{WorkspaceID: ws, Kind: forkengine.EventSessionUpserted, SessionID: "x"}})
				return err
			}))
			wake <- struct{}{}
			require.Equal(t, []int64{1}, collect(t, s, 1))
		})
	}
}

// TestLiveSubscriberThatFallsBehindMustResume: the broker ends a subscriber whose queue is full
// with RESUME_REQUIRED and the stream names the last cursor it sent.
func TestLiveSubscriberThatFallsBehindMustResume(t *testing.T) {
	t.Parallel()
	f := newFeedFixture(t, forkengine.EventsConfig{QueueSize: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := f.follow(ctx, forkengine.WorkspacePosition{})
	require.NoError(t, err)
	f.broker.Publish([]forkengine.Event{{Cursor: 1, WorkspaceID: ws}, {Cursor: 2, WorkspaceID: ws}, {Cursor: 3, WorkspaceID: ws}})
	require.Equal(t, []int64{1, 2}, collect(t, s, 2))
	_, open := <-s.C
	require.False(t, open)
	require.Equal(t, forkengine.CodeResumeRequired, forkengine.ErrorCode(s.Err()))
	require.Equal(t, int64(2), s.LastCursor())
}

// TestLiveStreamWakesAConsumerWaitingWithoutAGoroutine: OnReady says whether a receive would
// wait and, when it would, calls the wake it was given once a value arrives or the stream ends.
func TestLiveStreamWakesAConsumerWaitingWithoutAGoroutine(t *testing.T) {
	t.Parallel()
	f := newFeedFixture(t, forkengine.EventsConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := f.follow(ctx, forkengine.WorkspacePosition{})
	require.NoError(t, err)
	woken := make(chan struct{}, 4)
	wake := func() { woken <- struct{}{} }
	require.False(t, s.OnReady(wake), "nothing published yet")
	require.Empty(t, woken)
	f.broker.Publish([]forkengine.Event{{Cursor: 1, WorkspaceID: ws}})
	<-woken
	require.True(t, s.OnReady(wake), "a value waits")
	require.Equal(t, int64(1), <-s.C)
	require.False(t, s.OnReady(wake))
	cancel() // the subscriber leaves: C closes, and the waiting consumer hears of it
	<-woken
	require.True(t, s.OnReady(wake), "closed")
	_, open := <-s.C
	require.False(t, open)
	require.Empty(t, woken, "one wake per wait")

	replayCtx, stopReplay := context.WithCancel(context.Background())
	defer stopReplay()
	resumed, err := f.follow(replayCtx, forkengine.WorkspacePosition{Resume: true})
	require.NoError(t, err)
	require.True(t, resumed.OnReady(wake), "a replaying stream cannot tell: its consumer receives as usual")
}

// appendElsewhere commits an event without this engine, as another instance would: the feed
// hears of it only from the log.
func (f *feedFixture) appendElsewhere(session string) {
	f.t.Helper()
	ctx := context.Background()
	require.NoError(f.t, f.store.Update(ctx, func(tx forkengine.Tx) error {
		_, err := tx.AppendEvents(ctx, []forkengine.Event{{WorkspaceID: ws, Kind: forkengine.EventSessionUpserted, SessionID: session}})
		return err
	}))
}

// TestFeedDeliversLocalCommitsWithoutReadingTheLog: a local commit whose events are the log's
// next ones reaches subscribers from Publish, with no read of the log; one that follows
// another instance's commit makes the feed read the log, and both arrive in order.
func TestFeedDeliversLocalCommitsWithoutReadingTheLog(t *testing.T) {
	t.Parallel()
	log := &countedLog{}
	f := newFeedFixture(t, forkengine.EventsConfig{Poll: time.Hour}, log)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := f.follow(ctx, forkengine.WorkspacePosition{})
	require.NoError(t, err)
	for i := range 20 {
		f.report(fmt.Sprintf("s%d", i), "title")
	}
	want := make([]int64, 20)
	for i := range want {
		want[i] = int64(i + 1)
	}
	require.Equal(t, want, collect(t, s, 20))
	require.Zero(t, log.count(), "twenty local commits, each the log's next events: nothing read back")

	f.appendElsewhere("x")  // cursor 21, which this process did not publish
	f.report("s0", "again") // cursor 22 does not follow the feed's position (20)
	require.Equal(t, []int64{21, 22}, collect(t, s, 2))
	require.Positive(t, log.count(), "the feed read the log for the event it had not seen")
}

// TestFeedDeliversPublishedEventsOutOfOrderOnceInLogOrder: events published after a later
// cursor's were already delivered are not delivered again, and ones published ahead of an
// earlier cursor wait for the log, so a subscriber sees each once, in cursor order.
func TestFeedDeliversPublishedEventsOutOfOrderOnceInLogOrder(t *testing.T) {
	t.Parallel()
	f := newFeedFixture(t, forkengine.EventsConfig{Poll: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := f.follow(ctx, forkengine.WorkspacePosition{})
	require.NoError(t, err)
	f.appendElsewhere("a")
	f.appendElsewhere("b")
	logged, err := f.store.LogEventsAfter(ctx, 0, 10)
	require.NoError(t, err)
	require.Len(t, logged, 2)
	f.feed.Publish(logged[1:]) // cursor 2 first: not the next one, so the feed reads the log
	require.Equal(t, []int64{1, 2}, collect(t, s, 2))
	f.feed.Publish(logged[:1]) // cursor 1, late: already delivered
	f.report("s1", "three")
	require.Equal(t, []int64{3}, collect(t, s, 1), "no second 1")
}
