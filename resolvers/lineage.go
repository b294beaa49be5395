package resolvers

import (
	"context"

	"github.com/forkgraph/forkgraph/graph"
	"github.com/forkgraph/forkgraph/models"
)

// Lineage returns the resolvers of Lineage's fields.
func (r *Resolver) Lineage() graph.LineageResolver { return &lineageResolver{r} }

// LineageConnection returns the resolvers of LineageConnection's fields.
func (r *Resolver) LineageConnection() graph.LineageConnectionResolver {
	return &lineageConnectionResolver{r}
}

type lineageResolver struct{ *Resolver }

type lineageConnectionResolver struct{ *Resolver }

func (r *lineageResolver) TargetSession(ctx context.Context, obj *models.Lineage) (*models.Session, error) {
	return r.liveSessionView(ctx, obj.WorkspaceID, obj.TargetSessionID)
}

func (r *lineageResolver) SourceTurn(ctx context.Context, obj *models.Lineage) (*models.Turn, error) {
	return r.liveTurnView(ctx, obj.WorkspaceID, obj.SourceTurnID)
}

func (r *lineageResolver) TargetTurn(ctx context.Context, obj *models.Lineage) (*models.Turn, error) {
	return r.liveTurnView(ctx, obj.WorkspaceID, obj.TargetTurnID)
}

func (r *lineageConnectionResolver) TotalCount(ctx context.Context, obj *models.LineageConnection) (int, error) {
	count, _, err := r.loaders(ctx).lists.forkCounts.load(ctx, key{obj.WorkspaceID, obj.SessionID})
	return count, err
}
