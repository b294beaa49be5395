package resolvers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
)

const eventsSubscription = `subscription($ws: ID!, $after: String) { workspaceEvents(workspaceId: $ws, after: $after) {
  cursor kind occurredAt sessionId turnId forkOperationId session { id title } turn { id } forkOperation { id } } }`

type eventFrame struct {
	WorkspaceEvents struct {
		Cursor, Kind, OccurredAt string
		SessionID                *string
		Session                  *struct{ ID, Title string }
	}
}

// logCursors returns the API cursors of the workspace's logged events after the given one.
func (a *testAPI) logCursors(ws string, after int64) []string {
	a.t.Helper()
	events, err := a.db.EventsAfter(context.Background(), ws, after, 10_000)
	require.NoError(a.t, err)
	out := make([]string, len(events))
	for i, ev := range events {
		out[i] = models.EventCursor(ev.Cursor)
	}
	return out
}

// lastCursor returns the newest logged event of the workspace (0 when none).
func (a *testAPI) lastCursor(ws string) int64 {
	a.t.Helper()
	events, err := a.db.EventsAfter(context.Background(), ws, 0, 10_000)
	require.NoError(a.t, err)
	if len(events) == 0 {
		return 0
	}
	return events[len(events)-1].Cursor
}

// readEvents reads n events of subscription id and returns their cursors.
func readEvents(ws *wsClient, id string, n int) []string {
	out := make([]string, n)
	for i := range out {
		var f eventFrame
		ws.nextData(id, &f)
		out[i] = f.WorkspaceEvents.Cursor
	}
	return out
}

func (a *testAPI) reportTitle(ws, id, title string) {
	a.t.Helper()
	_, err := a.engine.ReportSession(context.Background(), forkengine.SessionReport{
		WorkspaceID: ws, ID: id, Provider: "simulated", Title: &title})
	require.NoError(a.t, err)
}

func TestWorkspaceEventsResume(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	api.seedSession("w", "s0", 1, "")
	start := api.lastCursor("w")

	first := api.dialWS(nil)
	first.subscribe("1", eventsSubscription, map[string]any{"ws": "w", "after": models.EventCursor(start)})
	api.seedSession("w", "s1", 1, "")
	seen := api.logCursors("w", start)
	require.Equal(t, seen, readEvents(first, "1", len(seen)))
	require.NoError(t, first.conn.Close())

	last := api.lastCursor("w")
	api.seedSession("w", "s2", 2, "") // missed while disconnected
	api.reportTitle("other", "x", "another workspace")
	missed := api.logCursors("w", last)
	require.NotEmpty(t, missed)

	second := api.dialWS(nil)
	second.subscribe("2", eventsSubscription, map[string]any{"ws": "w", "after": seen[len(seen)-1]})
	require.Equal(t, missed, readEvents(second, "2", len(missed)), "exactly the missed events, in order")

	beforeLive := api.lastCursor("w")
	api.reportTitle("w", "s3", "live")
	live := api.logCursors("w", beforeLive)
	var f eventFrame
	for i, want := range live {
		second.nextData("2", &f)
		require.Equal(t, want, f.WorkspaceEvents.Cursor, "live event %d", i)
	}
	require.Equal(t, "SESSION_UPSERTED", f.WorkspaceEvents.Kind)
	require.Equal(t, "live", f.WorkspaceEvents.Session.Title)
}

// Loaders are per response, not per connection: the second event of one subscription sees the
// change made after the first was sent.
func TestSubscriptionEventsGetFreshLoaders(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	api.reportTitle("w", "s1", "one")
	ws := api.dialWS(nil)
	ws.subscribe("1", eventsSubscription, map[string]any{"ws": "w", "after": models.EventCursor(api.lastCursor("w"))})

	api.reportTitle("w", "s1", "two")
	var f eventFrame
	ws.nextData("1", &f)
	require.Equal(t, "two", f.WorkspaceEvents.Session.Title)

	api.reportTitle("w", "s1", "three")
	ws.nextData("1", &f)
	require.Equal(t, "three", f.WorkspaceEvents.Session.Title)
}

func TestWorkspaceEventsErrors(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{brokerQueue: 1})
	api.reportTitle("a", "s", "in a")
	cursorOfA := api.lastCursor("a")
	api.reportTitle("b", "s", "in b")

	for i, tc := range []struct{ after, reason string }{
		{"not-a-cursor", models.ReasonInvalidCursor},
		{models.EventCursor(api.lastCursor("b") + 1000), models.ReasonInvalidCursor},
		{models.EventCursor(cursorOfA), models.ReasonCursorExpired},
	} {
		id := fmt.Sprint(i)
		ws := api.dialWS(nil) // one connection per stream: nothing may follow an error
		ws.subscribe(id, eventsSubscription, map[string]any{"ws": "b", "after": tc.after})
		errs := ws.streamError(id)
		require.Equal(t, "BAD_USER_INPUT", errs[0].code(), "%+v", errs[0])
		require.Equal(t, tc.reason, errs[0].Extensions["reason"])
	}

	for _, resumed := range []bool{true, false} {
		name := "a live subscriber that falls behind is told to resume"
		vars := map[string]any{"ws": "b"}
		if resumed {
			name = "a resumed subscriber that falls behind is told to resume"
			vars["after"] = models.EventCursor(api.lastCursor("b"))
		}
		t.Run(name, func(t *testing.T) {
			lagging := api.dialWS(nil)
			before := api.broker.Subscribers()
			lagging.subscribe("lag", eventsSubscription, vars)
			if !resumed { // a live stream misses what precedes its subscription: await it
				require.Eventually(t, func() bool { return api.broker.Subscribers() > before },
					5*time.Second, time.Millisecond)
			}
			api.reportTitle("b", "s", name) // once it arrives, the subscriber is live
			var f eventFrame
			lagging.nextData("lag", &f)
			requireResumeAfterBurst(t, api, lagging, f.WorkspaceEvents.Cursor)
		})
	}

	t.Run("following an unknown operation", func(t *testing.T) {
		ws := api.dialWS(nil)
		ws.subscribe("ghost", followSubscription, map[string]any{"id": "ghost"})
		errs := ws.streamError("ghost")
		require.Equal(t, "NOT_FOUND", errs[0].code())
	})
}

// requireResumeAfterBurst publishes more events than any queue holds and expects the stream to
// end with RESUME_REQUIRED naming the last cursor the client received.
func requireResumeAfterBurst(t *testing.T, api *testAPI, lagging *wsClient, received string) {
	t.Helper()
	burst := make([]forkengine.Event, 500)
	for i := range burst {
		burst[i] = forkengine.Event{Cursor: int64(1_000_000 + i), WorkspaceID: "b", Kind: forkengine.EventSessionUpserted,
			SessionID: "s", OccurredAt: time.Now()}
	}
	api.broker.Publish(burst)
	var f eventFrame
	for {
		m := lagging.read()
		if m.Type == "next" && !hasErrors(m) {
			require.NoError(t, json.Unmarshal(m.Payload, &struct{ Data *eventFrame }{&f}))
			received = f.WorkspaceEvents.Cursor
			continue
		}
		errs := streamErrorOf(t, m)
		require.Equal(t, "RESUME_REQUIRED", errs[0].code(), "%+v", errs[0])
		require.Contains(t, errs[0].Message, received, "names the last cursor received")
		return
	}
}

// A live stream has no goroutine of its own; its broker subscription must still end with the
// operation, whether the client completes it or goes away.
func TestWorkspaceEventsReleaseTheBrokerSubscription(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	ws := api.dialWS(nil)
	ws.subscribe("completed", eventsSubscription, map[string]any{"ws": "w"})
	ws.subscribe("dropped", eventsSubscription, map[string]any{"ws": "w"})
	require.Eventually(t, func() bool { return api.broker.Subscribers() == 2 }, 5*time.Second, time.Millisecond)

	require.NoError(t, ws.conn.WriteJSON(map[string]any{"id": "completed", "type": "complete"}))
	require.Eventually(t, func() bool { return api.broker.Subscribers() == 1 }, 5*time.Second, time.Millisecond)
	require.NoError(t, ws.conn.Close())
	require.Eventually(t, func() bool { return api.broker.Subscribers() == 0 }, 5*time.Second, time.Millisecond)
}

// workspaceEventCursor lets a client read a snapshot and then subscribe after it with no gap: the
// cursor names the newest event of that workspace only.
func TestWorkspaceEventCursor(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	var resp struct{ WorkspaceEventCursor string }
	query := `query($ws: ID!) { workspaceEventCursor(workspaceId: $ws) }`

	// An empty workspace answers the start of its log: a change made between this read and the
	// subscription is replayed, not lost.
	api.mustDo(query, &resp, map[string]any{"ws": "w"})
	require.Equal(t, models.EventCursor(0), resp.WorkspaceEventCursor)
	early := api.dialWS(nil)
	api.seedSession("w", "s0", 1, "") // before the subscription exists
	early.subscribe("0", eventsSubscription, map[string]any{"ws": "w", "after": resp.WorkspaceEventCursor})
	fromStart := api.logCursors("w", 0)
	require.Equal(t, fromStart, readEvents(early, "0", len(fromStart)), "every change since the read")

	api.reportTitle("other", "x", "another workspace, later")
	api.mustDo(query, &resp, map[string]any{"ws": "w"})
	require.Equal(t, models.EventCursor(api.lastCursor("w")), resp.WorkspaceEventCursor)

	ws := api.dialWS(nil)
	ws.subscribe("1", eventsSubscription, map[string]any{"ws": "w", "after": resp.WorkspaceEventCursor})
	before := api.lastCursor("w")
	api.reportTitle("w", "s0", "renamed after the snapshot")
	want := api.logCursors("w", before)
	require.Equal(t, want, readEvents(ws, "1", len(want)), "exactly the changes after the snapshot")
}
