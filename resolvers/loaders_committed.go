package resolvers

import (
	"context"

	"github.com/forkgraph/forkgraph/forkengine"
)

// committedResult is the immutable projection of a committed fork: its target session and lineage.
type committedResult struct {
	session forkengine.Session
	lineage forkengine.Lineage
}

// committedResultOf returns the committed projection of an operation once per response, however
// many of its fields (session, lineage) are selected. The engine builds each projection from the
// operation and its frozen snapshot, checking it against the stored lineage, one operation at a
// time: a page of committed operations costs one lineage read per operation whose session or
// lineage is selected.
func (l *loaders) committedResultOf(ctx context.Context, op forkengine.ForkOperation) (committedResult, error) {
	k := key{op.WorkspaceID, op.ID}
	l.committedOpsMu.Lock()
	l.committedOps[k] = op
	l.committedOpsMu.Unlock()
	result, _, err := l.committed.load(ctx, k)
	return result, err
}

func (l *loaders) readCommitted(ctx context.Context, keys []key) (map[key]committedResult, error) {
	out := make(map[key]committedResult, len(keys))
	var sessions []forkengine.Session
	var lineages []forkengine.Lineage
	for _, k := range keys {
		l.committedOpsMu.Lock()
		op, ok := l.committedOps[k]
		l.committedOpsMu.Unlock()
		if !ok {
			continue
		}
		s, ln, err := l.engine.CommittedResult(ctx, op)
		if err != nil {
			return nil, err
		}
		out[k] = committedResult{session: s, lineage: ln}
		sessions, lineages = append(sessions, s), append(lineages, ln)
	}
	l.sawSessions(sessions)
	l.sawLineages(lineages)
	return out, nil
}
