package resolvers

import (
	"context"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
)

// sessionCount is the count behind totalCount and totalCountIsLowerBound, read once per
// connection whichever of the two a client selects: the list's count without a search, else the
// search's, bounded by r.searchScan (Config.SearchScanRows).
func (r *Resolver) sessionCount(ctx context.Context, obj *models.SessionConnection) (forkengine.SearchCount, error) {
	return obj.Count(func() (forkengine.SearchCount, error) {
		if len(obj.Filter.Search) == 0 {
			n, err := r.engine.Reader().CountSessions(ctx, obj.WorkspaceID, obj.Filter)
			return forkengine.SearchCount{N: n}, err
		}
		return r.engine.Reader().CountSearch(ctx, obj.WorkspaceID, obj.Filter, r.searchScan)
	})
}
