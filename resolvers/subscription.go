package resolvers

import (
	"context"

	"github.com/forkgraph/forkgraph/graph"
	"github.com/forkgraph/forkgraph/models"
)

// Subscription returns the resolvers of Subscription's fields.
func (r *Resolver) Subscription() graph.SubscriptionResolver { return &subscriptionResolver{r} }

type subscriptionResolver struct{ *Resolver }

func (r *subscriptionResolver) ForkOperationUpdated(ctx context.Context, workspaceID string, id string) (<-chan *models.ForkOperation, error) {
	return r.followOperation(ctx, workspaceID, id)
}

func (r *subscriptionResolver) WorkspaceEvents(ctx context.Context, workspaceID string, after *string) (<-chan *models.WorkspaceEvent, error) {
	return r.streamEvents(ctx, workspaceID, after)
}
