package resolvers

import (
	"context"

	"github.com/forkgraph/forkgraph/graph"
	"github.com/forkgraph/forkgraph/models"
)

// WorkspaceEvent returns the resolvers of WorkspaceEvent's fields.
func (r *Resolver) WorkspaceEvent() graph.WorkspaceEventResolver { return &workspaceEventResolver{r} }

type workspaceEventResolver struct{ *Resolver }

func (r *workspaceEventResolver) Session(ctx context.Context, obj *models.WorkspaceEvent) (*models.Session, error) {
	if obj.SessionID == nil {
		return nil, nil
	}
	return r.sessionView(ctx, obj.WorkspaceID, *obj.SessionID)
}

func (r *workspaceEventResolver) Turn(ctx context.Context, obj *models.WorkspaceEvent) (*models.Turn, error) {
	if obj.TurnID == nil {
		return nil, nil
	}
	return r.turnView(ctx, obj.WorkspaceID, *obj.TurnID)
}

func (r *workspaceEventResolver) ForkOperation(ctx context.Context, obj *models.WorkspaceEvent) (*models.ForkOperation, error) {
	if obj.ForkOperationID == nil {
		return nil, nil
	}
	op, ok, err := r.loaders(ctx).operation(ctx, obj.WorkspaceID, *obj.ForkOperationID)
	if err != nil || !ok {
		return nil, err
	}
	return models.ForkOperationFrom(op), nil
}
