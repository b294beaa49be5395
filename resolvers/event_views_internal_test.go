package resolvers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
)

func TestEventViewsBuildOneViewPerPublishedEvent(t *testing.T) {
	t.Parallel()
	var views eventViews
	first := &forkengine.Event{Cursor: 1, WorkspaceID: "w", Kind: forkengine.EventTurnUpserted, SessionID: "s", TurnID: "t"}
	shared := views.of(first)
	require.Same(t, shared, views.of(first), "every subscriber of one event gets one view")
	require.Equal(t, models.WorkspaceEventFrom(*first), shared, "the view is what a fresh conversion returns")

	// The next event, even with equal contents, is another publication and gets its own view.
	second := &forkengine.Event{Cursor: 2, WorkspaceID: "w", Kind: forkengine.EventSessionUpserted, SessionID: "s"}
	next := views.of(second)
	require.NotSame(t, shared, next)
	require.Equal(t, models.EventCursor(2), next.Cursor)
	require.Equal(t, models.EventCursor(1), shared.Cursor, "an earlier view is left as it was")
}
