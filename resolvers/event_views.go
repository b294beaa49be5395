package resolvers

import (
	"sync"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
)

// eventViews shares the API view of a published event among its live subscribers. The broker
// hands every subscriber the same read-only copy of an event, one subscriber after another, so
// remembering the view of the last event seen builds it once per event instead of once per
// subscriber. Sharing is exact, not a cache: a view holds only the event's own fields (cursor,
// kind, time, ids, the status it recorded), which never change; the session, turn and operation
// it names are still read per response, by that response's loaders, as they are when it is sent.
// Responses only read views.
type eventViews struct {
	mu   sync.Mutex
	ev   *forkengine.Event
	view *models.WorkspaceEvent
}

// of returns the view of ev, built on the first call for this event.
func (v *eventViews) of(ev *forkengine.Event) *models.WorkspaceEvent {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ev != ev {
		v.ev, v.view = ev, models.WorkspaceEventFrom(*ev)
	}
	return v.view
}
