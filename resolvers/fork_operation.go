package resolvers

import (
	"context"

	"github.com/forkgraph/forkgraph/graph"
	"github.com/forkgraph/forkgraph/models"
)

// ForkOperation returns the resolvers of ForkOperation's fields.
func (r *Resolver) ForkOperation() graph.ForkOperationResolver { return &forkOperationResolver{r} }

// ForkOperationConnection returns the resolvers of ForkOperationConnection's fields.
func (r *Resolver) ForkOperationConnection() graph.ForkOperationConnectionResolver {
	return &forkOperationConnectionResolver{r}
}

type forkOperationResolver struct{ *Resolver }

type forkOperationConnectionResolver struct{ *Resolver }

func (r *forkOperationResolver) Session(ctx context.Context, obj *models.ForkOperation) (*models.Session, error) {
	if obj.Status != models.ForkOperationStatusCommitted {
		return nil, nil
	}
	result, err := r.loaders(ctx).committedResultOf(ctx, obj.Domain())
	if err != nil {
		return nil, err
	}
	return models.SessionFrom(result.session, r.relations(ctx)), nil
}

func (r *forkOperationResolver) Lineage(ctx context.Context, obj *models.ForkOperation) (*models.Lineage, error) {
	if obj.Status != models.ForkOperationStatusCommitted {
		return nil, nil
	}
	result, err := r.loaders(ctx).committedResultOf(ctx, obj.Domain())
	if err != nil {
		return nil, err
	}
	return models.LineageFrom(result.lineage, r.relations(ctx)), nil
}

func (r *forkOperationResolver) SourceSession(ctx context.Context, obj *models.ForkOperation) (*models.Session, error) {
	return r.sessionView(ctx, obj.WorkspaceID, obj.SourceSessionID)
}

func (r *forkOperationResolver) ThroughTurn(ctx context.Context, obj *models.ForkOperation) (*models.Turn, error) {
	return r.turnView(ctx, obj.WorkspaceID, obj.ThroughTurnID)
}

func (r *forkOperationConnectionResolver) TotalCount(ctx context.Context, obj *models.ForkOperationConnection) (int, error) {
	return r.engine.Reader().CountOperations(ctx, obj.WorkspaceID, obj.Filter)
}
