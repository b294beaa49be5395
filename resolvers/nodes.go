package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
)

// MaxNodeIDs bounds nodes(ids:): a longer list is BAD_USER_INPUT with reason ReasonTooManyIDs.
const MaxNodeIDs = 100

// ReasonTooManyIDs marks a nodes(ids:) call with more than MaxNodeIDs ids.
const ReasonTooManyIDs = "too_many_ids"

// nodeViews answers node and nodes: the object each global id names, or nil when it does not
// exist, in the order of ids. The ids are read through the response's loaders, one batch per
// type (operations and lineages share one read of operations), however many ids there are.
// Workspace access was decided by authorizeRootField from the same ids. Errors: BAD_USER_INPUT
// (reason invalid_id).
func (r *Resolver) nodeViews(ctx context.Context, field string, ids []string) ([]models.Node, error) {
	refs := make([]models.GlobalRef, len(ids))
	byType := map[models.NodeType][]key{}
	for i, id := range ids {
		ref, err := parseNodeID(field, id)
		if err != nil {
			return nil, err
		}
		refs[i] = ref
		byType[ref.Type] = append(byType[ref.Type], key{ref.WorkspaceID, ref.LocalID})
	}
	l := r.loaders(ctx)
	found, err := l.nodesByType(ctx, byType)
	if err != nil {
		return nil, err
	}
	out := make([]models.Node, len(refs))
	for i, ref := range refs {
		if node, ok := found[ref]; ok {
			out[i] = node
		}
	}
	return out, nil
}

// nodesByType reads the objects of each type with one batch each and returns their views keyed by
// what names them. A Lineage exists when its operation committed.
func (l *loaders) nodesByType(ctx context.Context, byType map[models.NodeType][]key) (map[models.GlobalRef]models.Node, error) {
	out := map[models.GlobalRef]models.Node{}
	ref := func(t models.NodeType, k key) models.GlobalRef {
		return models.GlobalRef{Type: t, WorkspaceID: k.ws, LocalID: k.id}
	}
	if keys := byType[models.NodeSession]; len(keys) > 0 {
		sessions, err := l.sessions.getMany(ctx, keys)
		if err != nil {
			return nil, err
		}
		for k, s := range sessions {
			out[ref(models.NodeSession, k)] = models.SessionFrom(s)
		}
	}
	if keys := byType[models.NodeTurn]; len(keys) > 0 {
		turns, err := l.turns.getMany(ctx, keys)
		if err != nil {
			return nil, err
		}
		for k, t := range turns {
			out[ref(models.NodeTurn, k)] = models.TurnFrom(t)
		}
	}
	if keys := byType[models.NodeMessage]; len(keys) > 0 {
		messages, err := l.messages.getMany(ctx, keys)
		if err != nil {
			return nil, err
		}
		for k, m := range messages {
			out[ref(models.NodeMessage, k)] = models.MessagesFrom([]forkengine.Message{m})[0]
		}
	}
	opKeys := append(append([]key(nil), byType[models.NodeForkOperation]...), byType[models.NodeLineage]...)
	if len(opKeys) == 0 {
		return out, nil
	}
	ops, err := l.operations.getMany(ctx, opKeys) // one read for operations and lineages
	if err != nil {
		return nil, err
	}
	for _, k := range byType[models.NodeForkOperation] {
		if op, ok := ops[k]; ok {
			out[ref(models.NodeForkOperation, k)] = models.ForkOperationFrom(op)
		}
	}
	var committed []forkengine.ForkOperation
	for _, k := range byType[models.NodeLineage] {
		if op, ok := ops[k]; ok && op.Status == forkengine.StatusCommitted {
			committed = append(committed, op)
		}
	}
	results, err := l.committedResultsOf(ctx, committed)
	if err != nil {
		return nil, err
	}
	for k, result := range results {
		if result.err != nil { // an inconsistent lineage (FORK_CONFLICT): reported, and null
			graphql.AddError(ctx, result.err)
			continue
		}
		out[ref(models.NodeLineage, k)] = models.LineageFrom(result.lineage)
	}
	return out, nil
}
