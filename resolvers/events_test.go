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

	t.Run("a subscriber that falls behind is told to resume", func(t *testing.T) {
		lagging := api.dialWS(nil)
		lagging.subscribe("lag", eventsSubscription, map[string]any{"ws": "b", "after": models.EventCursor(api.lastCursor("b"))})
		api.reportTitle("b", "s", "trigger") // once it arrives, the subscriber is live
		var f eventFrame
		lagging.nextData("lag", &f)
		burst := make([]forkengine.Event, 500)
		for i := range burst {
			burst[i] = forkengine.Event{Cursor: int64(1_000_000 + i), WorkspaceID: "b", Kind: forkengine.EventSessionUpserted,
				SessionID: "s", OccurredAt: time.Now()}
		}
		api.broker.Publish(burst)
		received := f.WorkspaceEvents.Cursor
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
			break
		}
	})

	t.Run("following an unknown operation", func(t *testing.T) {
		ws := api.dialWS(nil)
		ws.subscribe("ghost", followSubscription, map[string]any{"id": "ghost"})
		errs := ws.streamError("ghost")
		require.Equal(t, "NOT_FOUND", errs[0].code())
	})
}
