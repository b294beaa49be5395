package resolvers

import (
	"context"
	"fmt"

	"github.com/forkgraph/forkgraph/forkengine"
)

// pendingOperation loads, in one batch per response, the operation a new fork request through
// t would get back (Turn.pendingForkOperation).
func (l *loaders) pendingOperation(ctx context.Context, t forkengine.Turn) (forkengine.ForkOperation, bool, error) {
	k := key{t.WorkspaceID, t.ID}
	l.probeTurnsMu.Lock()
	if _, ok := l.probeTurns[k]; !ok {
		l.probeTurns[k] = t
	}
	l.probeTurnsMu.Unlock()
	return l.pending.load(ctx, k)
}

// readPending asks the engine for the pending operations of the turns of keys, one call per
// workspace; the turns come from what the response already read.
func (l *loaders) readPending(ctx context.Context, keys []key) (map[key]forkengine.ForkOperation, error) {
	turns := map[string][]forkengine.Turn{}
	l.probeTurnsMu.Lock()
	for _, k := range keys {
		if t, ok := l.probeTurns[k]; ok {
			turns[k.ws] = append(turns[k.ws], t)
		}
	}
	l.probeTurnsMu.Unlock()
	out := map[key]forkengine.ForkOperation{}
	for ws, ts := range turns {
		pending, err := l.engine.PendingOperations(ctx, ws, ts)
		if err != nil {
			return nil, fmt.Errorf("pending operations in workspace %s: %w", ws, err)
		}
		for turnID, op := range pending {
			out[key{ws, turnID}] = op
		}
	}
	return out, nil
}
