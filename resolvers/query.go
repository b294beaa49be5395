package resolvers

import (
	"context"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/graph"
	"github.com/forkgraph/forkgraph/models"
)

// Query returns the resolvers of Query's fields.
func (r *Resolver) Query() graph.QueryResolver { return &queryResolver{r} }

type queryResolver struct{ *Resolver }

func (r *queryResolver) Viewer(ctx context.Context) (*models.Viewer, error) {
	p, err := r.identify.caller(ctx)
	if err != nil {
		return nil, err
	}
	return viewerOf(p), nil
}

func (r *queryResolver) Node(ctx context.Context, id string) (models.Node, error) {
	nodes, err := r.nodeViews(ctx, "id", []string{id})
	if err != nil {
		return nil, err
	}
	return nodes[0], nil
}

func (r *queryResolver) Nodes(ctx context.Context, ids []string) ([]models.Node, error) {
	if len(ids) > MaxNodeIDs {
		return nil, forkengine.ReasonErrorf(forkengine.CodeInvalid, ReasonTooManyIDs,
			"nodes takes at most %d ids, got %d", MaxNodeIDs, len(ids))
	}
	return r.nodeViews(ctx, "ids", ids)
}

func (r *queryResolver) Session(ctx context.Context, workspaceID string, id string) (*models.Session, error) {
	return r.sessionView(ctx, workspaceID, id)
}

func (r *queryResolver) Sessions(ctx context.Context, workspaceID string, first *int, after *string, last *int, before *string, filter *models.SessionFilter, search *string) (*models.SessionConnection, error) {
	f, err := models.SessionListFilter(filter, search)
	if err != nil {
		return nil, err
	}
	page, cursor, err := pageArgs(first, last, after, before, models.SessionListScope(workspaceID, f), models.DecodeSessionCursor)
	if err != nil {
		return nil, err
	}
	read, err := r.sessionPage(ctx, workspaceID, f, page, cursor)
	if err != nil {
		return nil, err
	}
	r.loaders(ctx).primeSessions(read.Sessions...)
	return models.SearchConnectionFrom(workspaceID, f, read, page, cursor, r.relations(ctx)), nil
}

func (r *queryResolver) ForkOperation(ctx context.Context, workspaceID string, id string) (*models.ForkOperation, error) {
	op, err := r.engine.Operation(ctx, workspaceID, id)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return models.ForkOperationFrom(op), nil
}

func (r *queryResolver) ForkOperations(ctx context.Context, workspaceID string, first *int, after *string, last *int, before *string, filter *models.ForkOperationFilter) (*models.ForkOperationConnection, error) {
	page, cursor, err := pageArgs(first, last, after, before, models.OperationListScope(workspaceID, filter.Domain()), models.DecodeOperationCursor)
	if err != nil {
		return nil, err
	}
	rows, err := r.operationPage(ctx, workspaceID, filter.Domain(), page, cursor)
	if err != nil {
		return nil, err
	}
	r.loaders(ctx).sawOperations(rows)
	return models.ForkOperationConnectionFrom(workspaceID, filter.Domain(), rows, page), nil
}

func (r *queryResolver) WorkspaceEventCursor(ctx context.Context, workspaceID string) (string, error) {
	latest, err := r.engine.Reader().LatestEventCursor(ctx, workspaceID)
	if err != nil {
		return "", err
	}
	return models.EventCursor(latest), nil // 0, the start of the log, for a workspace without events
}

func (r *queryResolver) VerifyForkedSession(ctx context.Context, workspaceID string, sessionID string) (*models.ForkVerification, error) {
	v, err := r.engine.VerifyForkedSession(ctx, workspaceID, sessionID)
	if err != nil {
		return nil, err
	}
	return models.ForkVerificationFrom(v, r.relations(ctx)), nil
}

func (r *queryResolver) WorkspaceSettings(ctx context.Context, workspaceID string) (*models.WorkspaceSettings, error) {
	state, err := r.engine.Forking(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	return models.WorkspaceSettingsFrom(workspaceID, state), nil
}
