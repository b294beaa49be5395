package resolvers

import (
	"context"

	"github.com/forkgraph/forkgraph/graph"
	"github.com/forkgraph/forkgraph/models"
)

// Session returns the resolvers of Session's fields.
func (r *Resolver) Session() graph.SessionResolver { return &sessionResolver{r} }

// SessionConnection returns the resolvers of SessionConnection's fields.
func (r *Resolver) SessionConnection() graph.SessionConnectionResolver {
	return &sessionConnectionResolver{r}
}

type sessionResolver struct{ *Resolver }

type sessionConnectionResolver struct{ *Resolver }

func (r *sessionResolver) Turns(ctx context.Context, obj *models.Session, first *int, after *string, last *int, before *string) (*models.TurnConnection, error) {
	page, sequence, err := pageArgs(first, last, after, before, models.TurnListScope(obj.WorkspaceID, obj.LocalID), models.DecodeTurnCursor)
	if err != nil {
		return nil, err
	}
	rows, err := r.loaders(ctx).turnPage(ctx, obj.WorkspaceID, obj.LocalID, page, sequence)
	if err != nil {
		return nil, err
	}
	return models.TurnConnectionFrom(obj.WorkspaceID, obj.LocalID, rows, page, r.relations(ctx)), nil
}

func (r *sessionResolver) ActiveTurn(ctx context.Context, obj *models.Session) (*models.Turn, error) {
	l := r.loaders(ctx)
	return l.views.turnOrNil(l.activeTurn.load(ctx, key{obj.WorkspaceID, obj.LocalID}))
}

func (r *sessionResolver) Messages(ctx context.Context, obj *models.Session) ([]*models.Message, error) {
	msgs, _, err := r.loaders(ctx).transcripts.load(ctx, key{obj.WorkspaceID, obj.LocalID})
	if err == nil && len(msgs) > MaxListLength {
		return nil, listTooLong("Session.messages", "Session.messagesConnection")
	}
	return models.MessagesFrom(msgs), err
}

func (r *sessionResolver) MessagesConnection(ctx context.Context, obj *models.Session, first *int, after *string, last *int, before *string) (*models.MessageConnection, error) {
	page, cursor, err := pageArgs(first, last, after, before, models.TranscriptListScope(obj.WorkspaceID, obj.LocalID), models.DecodeTranscriptCursor)
	if err != nil {
		return nil, err
	}
	rows, err := r.loaders(ctx).transcriptPage(ctx, obj.WorkspaceID, obj.LocalID, page, cursor)
	if err != nil {
		return nil, err
	}
	return models.TranscriptConnectionFrom(obj.WorkspaceID, obj.LocalID, rows, page), nil
}

func (r *sessionResolver) LifecycleCapabilities(ctx context.Context, obj *models.Session) (*models.LifecycleCapabilities, error) {
	caps, err := r.loaders(ctx).capabilitiesOf(ctx, obj.Domain())
	return &models.LifecycleCapabilities{Fork: caps.Fork, ForkThroughTurn: caps.ForkThroughTurn}, err
}

func (r *sessionResolver) Forks(ctx context.Context, obj *models.Session) ([]*models.Lineage, error) {
	lineages, _, err := r.loaders(ctx).forks.load(ctx, key{obj.WorkspaceID, obj.LocalID})
	if err == nil && len(lineages) > MaxListLength {
		return nil, listTooLong("Session.forks", "Session.forksConnection")
	}
	return models.LineagesFrom(lineages, r.relations(ctx)), err
}

func (r *sessionResolver) ForksConnection(ctx context.Context, obj *models.Session, first *int, after *string, last *int, before *string) (*models.LineageConnection, error) {
	page, cursor, err := pageArgs(first, last, after, before, models.ForkListScope(obj.WorkspaceID, obj.LocalID), models.DecodeForkCursor)
	if err != nil {
		return nil, err
	}
	rows, err := r.loaders(ctx).forkPage(ctx, obj.WorkspaceID, obj.LocalID, page, cursor)
	if err != nil {
		return nil, err
	}
	return models.LineageConnectionFrom(obj.WorkspaceID, obj.LocalID, rows, page, r.relations(ctx)), nil
}

func (r *sessionConnectionResolver) TotalCount(ctx context.Context, obj *models.SessionConnection) (int, error) {
	c, err := r.sessionCount(ctx, obj)
	return c.N, err
}

// TotalCountIsLowerBound says whether totalCount counted only the first
// forkengine.SearchScanRows rows of a search's rarest word (docs/api.md, Finding a session).
// Errors: the store's, as totalCount.
func (r *sessionConnectionResolver) TotalCountIsLowerBound(ctx context.Context, obj *models.SessionConnection) (bool, error) {
	c, err := r.sessionCount(ctx, obj)
	return c.LowerBound, err
}

// AuditMessages are the session's notices, read for every session of the response in one batch.
func (r *sessionResolver) AuditMessages(ctx context.Context, obj *models.Session) ([]*models.AuditMessage, error) {
	ms, _, err := r.loaders(ctx).sessionAudits.load(ctx, key{obj.WorkspaceID, obj.LocalID})
	return models.AuditMessagesFrom(ms), err
}
