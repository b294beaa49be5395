package resolvers_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/resolvers"
)

// liveEvents is a live-only workspaceEvents subscription (no after) reading the event's session
// through a loader, so every execution of an event shows up as one "sessions" batch.
const liveEvents = `subscription($ws: ID!) { workspaceEvents(workspaceId: $ws) { cursor kind session { id title } } }`

// liveEventsRespaced is liveEvents written differently: the same canonical document.
const liveEventsRespaced = `subscription ($ws: ID!) {
  workspaceEvents(workspaceId: $ws) {
    cursor
    kind
    session { id title } # the same selection
  }
}`

// batchCounter counts loader batches by loader name.
type batchCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

func (c *batchCounter) observe(ctx context.Context, loader string, _ int) (context.Context, func(error)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[string]int{}
	}
	c.counts[loader]++
	return ctx, func(error) {}
}

func (c *batchCounter) sessions() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts["sessions"]
}

func newCountingAPI(t *testing.T, opts apiOptions) (*testAPI, *batchCounter) {
	counter := &batchCounter{}
	opts.limits = func(c *resolvers.Config) { c.Batch = counter.observe }
	return newTestAPI(t, opts), counter
}

// subscribeLive subscribes each client to query on ws under id and waits until the broker has
// all of them: a live stream misses what precedes its subscription.
func (a *testAPI) subscribeLive(clients []*wsClient, id, query string, vars map[string]any) {
	a.t.Helper()
	a.awaitFeed()
	before := a.broker.Subscribers()
	for _, c := range clients {
		c.subscribe(id, query, vars)
	}
	require.Eventually(a.t, func() bool { return a.broker.Subscribers() == before+len(clients) }, 5*time.Second, time.Millisecond)
}

// awaitFeed waits until the feed has handed the broker every event committed so far. The feed
// delivers a commit's events after the commit returns, so a live subscription made at once could
// still get the last one, which the tests count as preceding it.
func (a *testAPI) awaitFeed() {
	a.t.Helper()
	events, err := a.feedDB.LogEventsAfter(context.Background(), 0, 0)
	require.NoError(a.t, err)
	var latest int64
	if len(events) > 0 {
		latest = events[len(events)-1].Cursor
	}
	require.Eventually(a.t, func() bool { return a.feed.Position() >= latest }, 5*time.Second, time.Millisecond)
}

func (a *testAPI) dialMany(n int, payload map[string]any) []*wsClient {
	clients := make([]*wsClient, n)
	for i := range clients {
		clients[i] = a.dialWS(payload)
	}
	return clients
}

// readTitles reads n events of id and returns "cursor title" for each.
func readTitles(c *wsClient, id string, n int) []string {
	out := make([]string, n)
	for i := range out {
		var f eventFrame
		c.nextData(id, &f)
		require.NotNil(c.t, f.WorkspaceEvents.Session)
		out[i] = f.WorkspaceEvents.Cursor + " " + f.WorkspaceEvents.Session.Title
	}
	return out
}

// Subscribers of the same live operation share one execution per event, and each still gets
// every event exactly once, in order, read when the event is sent (fresh loaders per event).
func TestSharedSubscriptionExecutesOncePerEvent(t *testing.T) {
	t.Parallel()
	api, batches := newCountingAPI(t, apiOptions{})
	api.reportTitle("w", "s1", "zero")
	clients := api.dialMany(5, nil)
	api.subscribeLive(clients[:3], "1", liveEvents, map[string]any{"ws": "w"})
	api.subscribeLive(clients[3:], "1", liveEventsRespaced, map[string]any{"ws": "w"})

	before := batches.sessions()
	var cursors []string
	for _, title := range []string{"one", "two", "three"} {
		api.reportTitle("w", "s1", title) // read before the next change: each event's own title
		want := api.logCursors("w", api.lastCursor("w")-1)[0] + " " + title
		for _, c := range clients {
			require.Equal(t, []string{want}, readTitles(c, "1", 1))
		}
		cursors = append(cursors, want)
	}
	require.Len(t, cursors, 3)
	require.Equal(t, 3, batches.sessions()-before, "one execution per event, not one per subscriber")
}

// What differs in the answer is never shared: another workspace, another selection, other
// variables each execute on their own.
func TestSharedSubscriptionSeparatesDistinctOperations(t *testing.T) {
	t.Parallel()
	api, batches := newCountingAPI(t, apiOptions{})
	inA, inB, otherSelection, otherVariables := api.dialMany(2, nil), api.dialWS(nil), api.dialWS(nil), api.dialWS(nil)
	api.subscribeLive(inA, "a", liveEvents, map[string]any{"ws": "a"})
	api.subscribeLive([]*wsClient{inB}, "b", liveEvents, map[string]any{"ws": "b"})
	api.subscribeLive([]*wsClient{otherSelection}, "a2",
		`subscription($ws: ID!) { workspaceEvents(workspaceId: $ws) { cursor kind session { id title provider } } }`,
		map[string]any{"ws": "a"})
	withProvider := `subscription($ws: ID!, $p: Boolean!) { workspaceEvents(workspaceId: $ws) { cursor kind session { id title provider @include(if: $p) } } }`
	api.subscribeLive([]*wsClient{otherVariables}, "a3", withProvider, map[string]any{"ws": "a", "p": true})
	api.subscribeLive([]*wsClient{otherVariables}, "a4", withProvider, map[string]any{"ws": "a", "p": false})

	before := batches.sessions()
	api.reportTitle("a", "s", "in a")
	for _, c := range inA {
		require.Len(t, readTitles(c, "a", 1), 1)
	}
	require.Len(t, readTitles(otherSelection, "a2", 1), 1)
	byID := map[string]int{}
	for range 2 {
		m := otherVariables.read()
		require.Equal(t, "next", m.Type)
		byID[m.ID]++
	}
	require.Equal(t, map[string]int{"a3": 1, "a4": 1}, byID)
	require.Equal(t, 4, batches.sessions()-before, "four distinct operations follow a: four executions")

	api.reportTitle("b", "s", "in b")
	require.Equal(t, []string{fmt.Sprintf("%s in b", api.logCursors("b", 0)[0])}, readTitles(inB, "b", 1))
	require.Equal(t, 5, batches.sessions()-before)
}

// Authorization is decided per subscriber, as before: a token of another workspace is refused
// even while a group follows that workspace, and the refused client gets nothing of it.
func TestSharedSubscriptionKeepsAuthorization(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{auth: tokenAuth(t, tokA+"=wa, "+tokB+"=wb")})
	members := api.dialMany(2, map[string]any{"authorization": "Bearer " + tokA})
	api.subscribeLive(members, "1", liveEvents, map[string]any{"ws": "wa"})

	intruder := api.dialWS(map[string]any{"authorization": "Bearer " + tokB})
	intruder.subscribe("1", liveEvents, map[string]any{"ws": "wa"})
	errs := intruder.streamError("1")
	require.Equal(t, "FORBIDDEN", errs[0].code(), "%+v", errs[0])

	api.reportTitle("wa", "s", "secret")
	for _, c := range members {
		require.Contains(t, readTitles(c, "1", 1)[0], "secret")
	}
	intruder.complete("1")
	intruder.subscribe("2", liveEvents, map[string]any{"ws": "wb"}) // its own workspace still works
	require.Eventually(t, func() bool { return api.broker.Subscribers() == 3 }, 5*time.Second, time.Millisecond)
	api.reportTitle("wb", "s", "its own")
	require.Len(t, readTitles(intruder, "2", 1), 1, "the next message is of its own workspace")
}

// A late joiner gets exactly the events published after it joined; a member that leaves ends
// nobody else's stream; the others keep sharing.
func TestSharedSubscriptionJoinAndLeave(t *testing.T) {
	t.Parallel()
	api, batches := newCountingAPI(t, apiOptions{})
	first, second := api.dialWS(nil), api.dialWS(nil)
	api.subscribeLive([]*wsClient{first, second}, "1", liveEvents, map[string]any{"ws": "w"})
	api.reportTitle("w", "s", "before the joiner")
	early := readTitles(first, "1", 1)
	require.Equal(t, early, readTitles(second, "1", 1))

	late := api.dialWS(nil)
	api.subscribeLive([]*wsClient{late}, "1", liveEvents, map[string]any{"ws": "w"})
	before := batches.sessions()
	api.reportTitle("w", "s", "after the joiner")
	next := readTitles(first, "1", 1)
	require.Equal(t, next, readTitles(second, "1", 1))
	require.Equal(t, next, readTitles(late, "1", 1), "the joiner's first event is the one after it joined")
	require.Equal(t, 1, batches.sessions()-before)

	require.NoError(t, second.conn.WriteJSON(map[string]any{"id": "1", "type": "complete"}))
	require.Eventually(t, func() bool { return api.broker.Subscribers() == 2 }, 5*time.Second, time.Millisecond)
	api.reportTitle("w", "s", "after a leave")
	last := readTitles(first, "1", 1)
	require.Equal(t, last, readTitles(late, "1", 1))
	require.Contains(t, last[0], "after a leave")

	require.NoError(t, first.conn.Close())
	require.NoError(t, late.conn.Close())
	require.Eventually(t, func() bool { return api.broker.Subscribers() == 0 }, 5*time.Second, time.Millisecond)
}

// A member that does not read holds nobody up: the others get every event at once, and when it
// reads again it has all of them too, in order.
func TestSharedSubscriptionSlowMember(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	slow, quick := api.dialWS(nil), api.dialWS(nil)
	api.subscribeLive([]*wsClient{slow, quick}, "1", liveEvents, map[string]any{"ws": "w"})
	var want []string
	for i := range 20 {
		api.reportTitle("w", "s", fmt.Sprint("title ", i))
		got := readTitles(quick, "1", 1)
		require.Contains(t, got[0], fmt.Sprint("title ", i))
		want = append(want, got...)
	}
	require.Equal(t, want, readTitles(slow, "1", 20))
}

// Stream ends reach every member as they would without sharing: a burst that overflows the
// queues ends each member's stream with RESUME_REQUIRED naming the last cursor it received.
func TestSharedSubscriptionMembersAreToldToResume(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{brokerQueue: 1})
	members := api.dialMany(2, nil)
	api.subscribeLive(members, "lag", eventsSubscription, map[string]any{"ws": "b"})
	api.reportTitle("b", "s", "live")
	for _, c := range members {
		var f eventFrame
		c.nextData("lag", &f)
		requireResumeAfterBurst(t, api, c, f.WorkspaceEvents.Cursor)
	}
}

// A resumed stream replays from its own cursor: it shares with nobody, so each resumed
// subscriber executes every event itself, exactly as before.
func TestResumedSubscriptionsAreNotShared(t *testing.T) {
	t.Parallel()
	api, batches := newCountingAPI(t, apiOptions{})
	api.reportTitle("w", "s", "first")
	after := map[string]any{"ws": "w", "after": api.logCursors("w", 0)[0]}
	resumed := api.dialMany(2, nil)
	api.subscribeLive(resumed, "1", `subscription($ws: ID!, $after: String) { workspaceEvents(workspaceId: $ws, after: $after) {
		cursor kind session { id title } } }`, after)
	before := batches.sessions()
	api.reportTitle("w", "s", "second")
	for _, c := range resumed {
		require.Contains(t, readTitles(c, "1", 1)[0], "second")
	}
	require.Equal(t, 2, batches.sessions()-before, "one execution per resumed subscriber")
}

// A subscriber over SSE joins the same group as one over a websocket: the response is the
// transports' to frame, the execution is shared.
func TestSharedSubscriptionAcrossTransports(t *testing.T) {
	t.Parallel()
	api, batches := newCountingAPI(t, apiOptions{})
	ws := api.dialWS(nil)
	api.subscribeLive([]*wsClient{ws}, "1", liveEvents, map[string]any{"ws": "w"})

	resp := api.postGraphQL(liveEvents, map[string]any{"ws": "w"}, "text/event-stream")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Eventually(t, func() bool { return api.broker.Subscribers() == 2 }, 5*time.Second, time.Millisecond)

	before := batches.sessions()
	api.reportTitle("w", "s", "to both")
	got := readTitles(ws, "1", 1)
	scanner := bufio.NewScanner(resp.Body)
	for scanner.Scan() {
		data, ok := strings.CutPrefix(scanner.Text(), "data: ")
		if !ok || strings.TrimSpace(data) == "" {
			continue
		}
		var frame struct{ Data eventFrame }
		require.NoError(t, json.Unmarshal([]byte(data), &frame), "event: %s", data)
		require.Equal(t, got[0], frame.Data.WorkspaceEvents.Cursor+" "+frame.Data.WorkspaceEvents.Session.Title)
		break
	}
	require.Equal(t, 1, batches.sessions()-before, "one execution for both transports")
}
