package resolvers

import (
	"context"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
)

// The accessors resolvers call. Each takes the workspace from the row it starts from.

func (l *loaders) session(ctx context.Context, ws, id string) (forkengine.Session, bool, error) {
	return l.sessions.load(ctx, key{ws, id})
}

func (l *loaders) turn(ctx context.Context, ws, id string) (forkengine.Turn, bool, error) {
	return l.turns.load(ctx, key{ws, id})
}

func (l *loaders) operation(ctx context.Context, ws, id string) (forkengine.ForkOperation, bool, error) {
	return l.operations.load(ctx, key{ws, id})
}

// turnPage returns up to page.Size+1 turns of a session from a sequence, nearest it first. Every
// session the response has seen is read in the same batch with the same arguments.
func (l *loaders) turnPage(ctx context.Context, ws, sessionID string, page models.Page, sequence int64) ([]forkengine.Turn, error) {
	l.pageSessionsMu.Lock()
	siblings := make([]pageKey, 0, len(l.pageSessions[ws]))
	for _, id := range l.pageSessions[ws] {
		siblings = append(siblings, pageKey{ws, id, page, sequence})
	}
	l.pageSessionsMu.Unlock()
	l.turnPages.hint(siblings...)
	turns, _, err := l.turnPages.load(ctx, pageKey{ws, sessionID, page, sequence})
	return turns, err
}

// forkable answers providerForkBindingAvailable for a turn; never an error for the client, a read
// failure is returned so the presenter logs it.
func (l *loaders) forkable(ctx context.Context, t forkengine.Turn) (bool, error) {
	k := key{t.WorkspaceID, t.ID}
	l.probeTurnsMu.Lock()
	if _, ok := l.probeTurns[k]; !ok {
		l.probeTurns[k] = t
	}
	l.probeTurnsMu.Unlock()
	available, _, err := l.forkability.load(ctx, k)
	return available, err
}

func (l *loaders) capabilitiesOf(ctx context.Context, s forkengine.Session) (forkengine.LifecycleCapabilities, error) {
	caps, _, err := l.capabilities.load(ctx, key{s.WorkspaceID, s.ID})
	return caps, err
}
