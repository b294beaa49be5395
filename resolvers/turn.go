package resolvers

import (
	"context"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/graph"
	"github.com/forkgraph/forkgraph/models"
)

// Turn returns the resolvers of Turn's fields.
func (r *Resolver) Turn() graph.TurnResolver { return &turnResolver{r} }

// TurnConnection returns the resolvers of TurnConnection's fields.
func (r *Resolver) TurnConnection() graph.TurnConnectionResolver { return &turnConnectionResolver{r} }

type turnResolver struct{ *Resolver }

type turnConnectionResolver struct{ *Resolver }

func (r *turnResolver) ProviderForkBindingState(ctx context.Context, obj *models.Turn) (models.ProviderForkBindingState, error) {
	available, err := r.loaders(ctx).forkable(ctx, obj.Domain())
	return models.BindingStateFrom(forkengine.TurnBindingState(obj.Domain(), available)), err
}

func (r *turnResolver) MessagesConnection(ctx context.Context, obj *models.Turn, first *int, after *string, last *int, before *string) (*models.MessageConnection, error) {
	ws := obj.Domain().WorkspaceID
	page, position, err := pageArgs(first, last, after, before, models.TurnMessageListScope(ws, obj.LocalID), models.DecodeTurnMessageCursor)
	if err != nil {
		return nil, err
	}
	rows, err := r.loaders(ctx).turnMessagePage(ctx, ws, obj.LocalID, page, position)
	if err != nil {
		return nil, err
	}
	return models.TurnMessageConnectionFrom(ws, obj.SessionID, obj.LocalID, rows, page), nil
}

func (r *turnResolver) Session(ctx context.Context, obj *models.Turn) (*models.Session, error) {
	s, err := r.sessionView(ctx, obj.Domain().WorkspaceID, obj.SessionID)
	if err == nil && s == nil {
		err = forkengine.Errorf(forkengine.CodeNotFound, "session %s of turn %s not found", obj.SessionID, obj.LocalID)
	}
	return s, err
}

func (r *turnResolver) PendingForkOperation(ctx context.Context, obj *models.Turn) (*models.ForkOperation, error) {
	op, ok, err := r.loaders(ctx).pendingOperation(ctx, obj.Domain())
	if err != nil || !ok {
		return nil, err
	}
	return models.ForkOperationFrom(op), nil
}

func (r *turnConnectionResolver) TotalCount(ctx context.Context, obj *models.TurnConnection) (int, error) {
	count, _, err := r.loaders(ctx).turnCounts.load(ctx, key{obj.WorkspaceID, obj.SessionID})
	return count, err
}

// Interactions are the turn's prompts, read for every turn of the response in one batch.
func (r *turnResolver) Interactions(ctx context.Context, obj *models.Turn) ([]*models.Interaction, error) {
	is, _, err := r.loaders(ctx).turnInteractions.load(ctx, key{obj.Domain().WorkspaceID, obj.LocalID})
	return models.InteractionsFrom(is), err
}
