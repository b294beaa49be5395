package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
)

// Prefetch: the batch reads a page of sessions will need, started together when the page is read.
//
// gqlgen reaches a page's relations one after another: a session's forkedFrom (called in line)
// before its latestTurn (resolved after the session's other fields), a turn's forkability before
// its messages, and the connection's totalCount after every edge. Each is one batch (the hints
// name the whole page), but the batches ran in sequence, one SQL round trip each, on a machine
// with cores to spare for one request. prefetchSessionPage reads the page's selection and starts
// the batches it asks for at once: the count, forkedFrom and latestTurn; when the latest turns are
// read, their forkability and messages; when the lineages are, their sessions. The rows' fields
// then find their batch running (relation.ensure waits for an inflight key) or done.
//
// Nothing is read that the selection does not ask for, and each relation still reads its hinted
// keys in one statement, so statement counts are unchanged. An error of a prefetched batch is the
// error of the fields that wait for it, as if they had run it.

// prefetchSessionPage starts the reads conn's selection (the sessions field of ctx) needs.
func (r *Resolver) prefetchSessionPage(ctx context.Context, conn *models.SessionConnection) {
	fc, oc := graphql.GetFieldContext(ctx), graphql.GetOperationContext(ctx)
	if fc == nil || oc == nil {
		return
	}
	l := r.loaders(ctx)
	var session []graphql.CollectedField
	for _, f := range graphql.CollectFields(oc, fc.Field.Selections, []string{"SessionConnection"}) {
		switch f.Name {
		case "totalCount":
			l.startSessionCount(ctx, conn, r.engine.Reader().CountSessions)
		case "edges":
			for _, e := range graphql.CollectFields(oc, f.Selections, []string{"SessionEdge"}) {
				if e.Name == "node" {
					session = append(session, graphql.CollectFields(oc, e.Selections, []string{"Session", "Node"})...)
				}
			}
		}
	}
	if len(conn.Edges) == 0 {
		return
	}
	rctx := l.views.ctx // the view relations' loads read with the response's context: so does a prefetch
	turnFields, lineageFields := selectionOf(session, "latestTurn"), selectionOf(session, "forkedFrom")
	// The latest turns (with the reads they lead to, the longest chain) in a goroutine of their
	// own; the lineages in the page's goroutine: every row asks for its lineage first (in line,
	// before gqlgen dispatches latestTurn), so the rows could not start without them anyway.
	if turnFields != nil {
		goIfAny(l.latestTurn.prefetch(rctx, func() []func() { return l.prefetchTurns(rctx, oc, turnFields) }))
	}
	if lineageFields != nil {
		runAll([]func(){l.forkedFrom.prefetch(rctx, func() []func() { return l.prefetchLineages(rctx, oc, lineageFields) })})
	}
}

// prefetchTurns starts the reads of the turns' fields sel asks for. It runs when the latest turns
// are read (hinted), before the fields waiting for them are released (relation.start).
func (l *loaders) prefetchTurns(ctx context.Context, oc *graphql.OperationContext, sel ast.SelectionSet) []func() {
	fields := graphql.CollectFields(oc, sel, []string{"Turn", "Node"})
	var fetches []func()
	if selectionOf(fields, "messages") != nil { // the longer read first: it runs without a new goroutine
		fetches = append(fetches, l.turnMessages.prefetch(ctx, nil))
	}
	if selectionOf(fields, "providerForkBindingAvailable") != nil || selectionOf(fields, "providerForkBindingState") != nil {
		fetches = append(fetches, l.forkability.prefetch(ctx, nil))
	}
	return fetches
}

// prefetchLineages starts the read of the lineages' sessions when sel asks for one (as
// prefetchTurns, when the lineages are read).
func (l *loaders) prefetchLineages(ctx context.Context, oc *graphql.OperationContext, sel ast.SelectionSet) []func() {
	fields := graphql.CollectFields(oc, sel, []string{"Lineage", "Node"})
	if selectionOf(fields, "sourceSession") != nil || selectionOf(fields, "targetSession") != nil {
		return []func(){l.sessions.prefetch(ctx, nil)}
	}
	return nil
}

// selectionOf is the selection under the fields named name (all of them, when aliased), or nil
// when fields has none (a scalar field selected has an empty, non-nil selection).
func selectionOf(fields []graphql.CollectedField, name string) ast.SelectionSet {
	var sel ast.SelectionSet
	for _, f := range fields {
		if f.Name == name {
			if sel == nil {
				sel = ast.SelectionSet{}
			}
			sel = append(sel, f.Selections...)
		}
	}
	return sel
}

// goIfAny runs fetch, when not nil, in a goroutine of its own.
func goIfAny(fetch func()) {
	if fetch != nil {
		go fetch()
	}
}

// sessionCount is a count of a page's sessions read beside the page (startSessionCount).
type sessionCount struct {
	done chan struct{}
	n    int
	err  error
}

// startSessionCount starts counting conn's sessions; sessionCountOf returns the count.
func (l *loaders) startSessionCount(ctx context.Context, conn *models.SessionConnection,
	count func(ctx context.Context, ws string, f forkengine.SessionFilter) (int, error)) {
	c := &sessionCount{done: make(chan struct{}), err: errFetchPanicked}
	l.sessionCountsMu.Lock()
	if l.sessionCounts == nil {
		l.sessionCounts = map[*models.SessionConnection]*sessionCount{}
	}
	l.sessionCounts[conn] = c
	l.sessionCountsMu.Unlock()
	go func() {
		defer close(c.done)
		defer func() { _ = recover() }()
		c.n, c.err = count(ctx, conn.WorkspaceID, conn.Filter)
	}()
}

// sessionCountOf waits for the count started for conn; ok is false when none was.
func (l *loaders) sessionCountOf(ctx context.Context, conn *models.SessionConnection) (n int, ok bool, err error) {
	l.sessionCountsMu.Lock()
	c := l.sessionCounts[conn]
	l.sessionCountsMu.Unlock()
	if c == nil {
		return 0, false, nil
	}
	select {
	case <-c.done:
		return c.n, true, c.err
	case <-ctx.Done():
		return 0, true, ctx.Err()
	}
}
