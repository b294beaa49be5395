package resolvers

import (
	"context"

	"github.com/forkgraph/forkgraph/graph"
	"github.com/forkgraph/forkgraph/models"
)

// Mutation returns the resolvers of Mutation's fields.
func (r *Resolver) Mutation() graph.MutationResolver { return &mutationResolver{r} }

type mutationResolver struct{ *Resolver }

func (r *mutationResolver) ReportSession(ctx context.Context, input models.ReportSessionInput) (*models.Session, error) {
	s, err := r.engine.ReportSession(ctx, input.Domain())
	if err != nil {
		return nil, err
	}
	r.loaders(ctx).primeSessions(s)
	return models.SessionFrom(s, r.relations(ctx)), nil
}

func (r *mutationResolver) ReportTurn(ctx context.Context, input models.ReportTurnInput) (*models.Turn, error) {
	t, err := r.engine.ReportTurn(ctx, input.Domain())
	if err != nil {
		return nil, err
	}
	r.loaders(ctx).primeTurns(t)
	return models.TurnFrom(t, r.relations(ctx)), nil
}

func (r *mutationResolver) AppendMessages(ctx context.Context, input models.AppendMessagesInput) ([]*models.Message, error) {
	msgs, err := r.engine.AppendMessages(ctx, input.Domain())
	if err != nil {
		return nil, err
	}
	return models.MessagesFrom(msgs), nil
}

func (r *mutationResolver) DeleteSession(ctx context.Context, workspaceID string, id string, purge *bool) (bool, error) {
	if err := r.engine.DeleteSession(ctx, workspaceID, id, purge != nil && *purge); err != nil {
		return false, err
	}
	return true, nil
}

func (r *mutationResolver) ForkSession(ctx context.Context, input models.ForkSessionInput) (*models.ForkOperation, error) {
	in := input.Domain()
	in.RequestedBy = r.subject(ctx)
	op, err := r.engine.StartFork(ctx, in)
	if err != nil {
		return nil, err
	}
	return models.ForkOperationFrom(op), nil
}

func (r *mutationResolver) AcknowledgeForkOperation(ctx context.Context, workspaceID string, id string) (*models.ForkOperation, error) {
	op, err := r.engine.Acknowledge(ctx, workspaceID, id, r.subject(ctx))
	if err != nil {
		return nil, err
	}
	return models.ForkOperationFrom(op), nil
}

func (r *mutationResolver) ReconcileForkOperation(ctx context.Context, workspaceID string, id string) (*models.ForkOperation, error) {
	op, err := r.engine.ReconcileForkOperation(ctx, workspaceID, id)
	if err != nil {
		return nil, err
	}
	return models.ForkOperationFrom(op), nil
}

func (r *mutationResolver) AbandonForkOperation(ctx context.Context, workspaceID string, id string, reason string) (*models.ForkOperation, error) {
	op, err := r.engine.AbandonForkOperation(ctx, workspaceID, id, reason)
	if err != nil {
		return nil, err
	}
	return models.ForkOperationFrom(op), nil
}

func (r *mutationResolver) SetWorkspaceForking(ctx context.Context, workspaceID string, enabled bool) (*models.WorkspaceSettings, error) {
	state, err := r.engine.SetWorkspaceForking(ctx, workspaceID, enabled)
	if err != nil {
		return nil, err
	}
	return models.WorkspaceSettingsFrom(workspaceID, state), nil
}

func (r *mutationResolver) ReportInteraction(ctx context.Context, input models.ReportInteractionInput) (*models.Interaction, error) {
	i, err := r.engine.ReportInteraction(ctx, input.Domain())
	if err != nil {
		return nil, err
	}
	return models.InteractionFrom(i), nil
}

func (r *mutationResolver) ReportAuditMessage(ctx context.Context, input models.ReportAuditMessageInput) (*models.AuditMessage, error) {
	m, err := r.engine.ReportAuditMessage(ctx, input.Domain())
	if err != nil {
		return nil, err
	}
	return models.AuditMessageFrom(m), nil
}
