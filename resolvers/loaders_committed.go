package resolvers

import (
	"context"

	"github.com/forkgraph/forkgraph/forkengine"
)

// committedResult is the immutable projection of a committed fork: its target session and lineage,
// or the operation's own error (an inconsistent lineage is a FORK_CONFLICT of that operation only).
type committedResult struct {
	session forkengine.Session
	lineage forkengine.Lineage
	err     error
}

// committedResultOf returns the committed projection of an operation once per response, however
// many of its fields (session, lineage) are selected. The operations asked for in one batch are
// projected together by Engine.CommittedResults, so a page of committed operations costs a fixed
// number of statements.
func (l *loaders) committedResultOf(ctx context.Context, op forkengine.ForkOperation) (committedResult, error) {
	k := key{op.WorkspaceID, op.ID}
	l.committedOpsMu.Lock()
	l.committedOps[k] = op
	l.committedOpsMu.Unlock()
	result, _, err := l.committed.load(ctx, k)
	if err != nil {
		return committedResult{}, err
	}
	return result, result.err
}

// committedResultsOf is committedResultOf for several committed operations, in one batch.
func (l *loaders) committedResultsOf(ctx context.Context, ops []forkengine.ForkOperation) (map[key]committedResult, error) {
	if len(ops) == 0 {
		return nil, nil
	}
	keys := make([]key, len(ops))
	l.committedOpsMu.Lock()
	for i, op := range ops {
		keys[i] = key{op.WorkspaceID, op.ID}
		l.committedOps[keys[i]] = op
	}
	l.committedOpsMu.Unlock()
	return l.committed.getMany(ctx, keys)
}

func (l *loaders) readCommitted(ctx context.Context, keys []key) (map[key]committedResult, error) {
	batch := make([]forkengine.ForkOperation, 0, len(keys))
	l.committedOpsMu.Lock()
	for _, k := range keys {
		if op, ok := l.committedOps[k]; ok {
			batch = append(batch, op)
		}
	}
	l.committedOpsMu.Unlock()
	results, err := l.engine.CommittedResults(ctx, batch)
	if err != nil {
		return nil, err
	}
	out := make(map[key]committedResult, len(batch))
	var sessions []forkengine.Session
	var lineages []forkengine.Lineage
	for i, op := range batch {
		r := results[i]
		out[key{op.WorkspaceID, op.ID}] = committedResult{session: r.Session, lineage: r.Lineage, err: r.Err}
		if r.Err == nil {
			sessions, lineages = append(sessions, r.Session), append(lineages, r.Lineage)
		}
	}
	l.sawSessions(sessions)
	l.sawLineages(lineages)
	return out, nil
}
