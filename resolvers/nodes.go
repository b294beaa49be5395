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
// what names them.
func (l *loaders) nodesByType(ctx context.Context, byType map[models.NodeType][]key) (map[models.GlobalRef]models.Node, error) {
	out := map[models.GlobalRef]models.Node{}
	err := readNodes(ctx, out, models.NodeSession, byType, l.sessions, func(s forkengine.Session) models.Node { return models.SessionFrom(s, l.views) })
	if err == nil {
		err = readNodes(ctx, out, models.NodeTurn, byType, l.turns, func(t forkengine.Turn) models.Node { return models.TurnFrom(t, l.views) })
	}
	if err == nil {
		err = readNodes(ctx, out, models.NodeMessage, byType, l.messages, func(m forkengine.Message) models.Node {
			return models.MessagesFrom([]forkengine.Message{m})[0]
		})
	}
	if err == nil {
		err = readNodes(ctx, out, models.NodeInteraction, byType, l.interactions, func(i forkengine.Interaction) models.Node {
			return models.InteractionFrom(i)
		})
	}
	if err == nil {
		err = readNodes(ctx, out, models.NodeAuditMessage, byType, l.audits, func(m forkengine.AuditMessage) models.Node {
			return models.AuditMessageFrom(m)
		})
	}
	if err == nil {
		err = l.operationNodes(ctx, out, byType)
	}
	return out, err
}

// readNodes reads the keys of one type through its relation (one batch) into out.
func readNodes[V any](ctx context.Context, out map[models.GlobalRef]models.Node, typ models.NodeType, byType map[models.NodeType][]key, r *relation[key, V], view func(V) models.Node) error {
	keys := byType[typ]
	if len(keys) == 0 {
		return nil
	}
	rows, err := r.getMany(ctx, keys)
	for k, row := range rows {
		out[models.GlobalRef{Type: typ, WorkspaceID: k.ws, LocalID: k.id}] = view(row)
	}
	return err
}

// operationNodes reads fork operations and lineages with one read of operations: a Lineage is
// named by its operation and exists once that operation committed (its committed projection, as
// ForkOperation.lineage answers it, read for all of them in one batch).
func (l *loaders) operationNodes(ctx context.Context, out map[models.GlobalRef]models.Node, byType map[models.NodeType][]key) error {
	opKeys, lineageKeys := byType[models.NodeForkOperation], byType[models.NodeLineage]
	if len(opKeys)+len(lineageKeys) == 0 {
		return nil
	}
	ops, err := l.operations.getMany(ctx, append(append([]key(nil), opKeys...), lineageKeys...))
	if err != nil {
		return err
	}
	for _, k := range opKeys {
		if op, ok := ops[k]; ok {
			out[models.GlobalRef{Type: models.NodeForkOperation, WorkspaceID: k.ws, LocalID: k.id}] = models.ForkOperationFrom(op)
		}
	}
	var committed []forkengine.ForkOperation
	for _, k := range lineageKeys {
		if op, ok := ops[k]; ok && op.Status == forkengine.StatusCommitted {
			committed = append(committed, op)
		}
	}
	results, err := l.committedResultsOf(ctx, committed)
	for k, result := range results {
		if result.err != nil { // an inconsistent lineage (FORK_CONFLICT): reported, and null
			graphql.AddError(ctx, result.err)
			continue
		}
		out[models.GlobalRef{Type: models.NodeLineage, WorkspaceID: k.ws, LocalID: k.id}] = models.LineageFrom(result.lineage, l.views)
	}
	return err
}
