package resolvers

import (
	"context"

	"github.com/forkgraph/forkgraph/graph"
	"github.com/forkgraph/forkgraph/models"
)

// MessageConnection returns the resolvers of MessageConnection's fields.
func (r *Resolver) MessageConnection() graph.MessageConnectionResolver {
	return &messageConnectionResolver{r}
}

type messageConnectionResolver struct{ *Resolver }

func (r *messageConnectionResolver) TotalCount(ctx context.Context, obj *models.MessageConnection) (int, error) {
	lists := r.loaders(ctx).lists
	if obj.TurnID != "" {
		count, _, err := lists.turnMessageCounts.load(ctx, key{obj.WorkspaceID, obj.TurnID})
		return count, err
	}
	count, _, err := lists.transcriptCounts.load(ctx, key{obj.WorkspaceID, obj.SessionID})
	return count, err
}
