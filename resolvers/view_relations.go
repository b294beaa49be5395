package resolvers

import (
	"context"
	"sync"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
)

// viewRelations is models.Relations over one response's loaders: what used to be the resolvers
// of Session.latestTurn and forkedFrom, Turn.providerForkBindingAvailable and messages, and
// Lineage.sourceSession, now called in line by gqlgen (see models.Relations). ctx is the
// response's context (the one withLoaders built the loaders in): the loaders read with it, so a
// read ends with the response and its batch spans sit under the operation.
type viewRelations struct {
	ctx context.Context
	l   *loaders

	// sources are the views of lineage sources already built: a page of forks of one session
	// asks for the same source once per row. Views are never changed once built.
	sourcesMu sync.Mutex
	sources   map[key]*models.Session
}

func (v *viewRelations) LatestTurn(s *models.Session) (*models.Turn, error) {
	return v.turnOrNil(v.l.latestTurn.load(v.ctx, key{s.WorkspaceID, s.LocalID}))
}

func (v *viewRelations) ForkedFrom(s *models.Session) (*models.Lineage, error) {
	lineage, ok, err := v.l.forkedFrom.load(v.ctx, key{s.WorkspaceID, s.LocalID})
	if err != nil || !ok {
		return nil, err
	}
	return models.LineageFrom(lineage, v), nil
}

func (v *viewRelations) TurnForkable(t *models.Turn) (bool, error) {
	return v.l.forkable(v.ctx, t.Domain())
}

func (v *viewRelations) TurnMessages(t *models.Turn) ([]*models.Message, error) {
	msgs, _, err := v.l.turnMessages.load(v.ctx, key{t.Domain().WorkspaceID, t.LocalID})
	if err == nil && len(msgs) > MaxListLength {
		return nil, listTooLong("Turn.messages", "Turn.messagesConnection")
	}
	return models.MessagesFrom(msgs), err
}

// LineageSourceSession is null for a soft-deleted source too (SPEC §5; liveSessionView).
func (v *viewRelations) LineageSourceSession(l *models.Lineage) (*models.Session, error) {
	k := key{l.WorkspaceID, l.SourceSessionID}
	v.sourcesMu.Lock()
	view, seen := v.sources[k]
	v.sourcesMu.Unlock()
	if seen {
		return view, nil
	}
	s, ok, err := v.l.session(v.ctx, k.ws, k.id)
	if err != nil {
		return nil, err
	}
	if ok && !s.Deleted() {
		view = models.SessionFrom(s, v)
	}
	v.sourcesMu.Lock()
	defer v.sourcesMu.Unlock()
	if v.sources == nil {
		v.sources = map[key]*models.Session{}
	}
	v.sources[k] = view
	return view, nil
}

func (v *viewRelations) turnOrNil(t forkengine.Turn, ok bool, err error) (*models.Turn, error) {
	if err != nil || !ok {
		return nil, err
	}
	return models.TurnFrom(t, v), nil
}

// relations returns the Relations of the views this response builds.
func (r *Resolver) relations(ctx context.Context) models.Relations { return r.loaders(ctx).views }
