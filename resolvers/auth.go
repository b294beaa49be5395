package resolvers

import (
	"context"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Authorizer decides whether the caller whose context ctx is may use workspace; an error is a
// forkengine.Error (UNAUTHENTICATED, FORBIDDEN). An empty workspace asks only whether the caller
// is authenticated at all: a root field that names no workspace (nodes(ids: [])) still needs a
// token. access.Tokens.Authorize is the one forkgraph uses; nil allows every workspace (open
// mode).
type Authorizer func(ctx context.Context, workspace string) error

// fieldPolicy is the server's one field middleware: the id arguments of any field first
// (idArguments.resolveIDs: a malformed id is BAD_USER_INPUT before any FORBIDDEN, and global ids
// are local from here on), then workspace access for root fields (authorizeRootField).
//
// gqlgen runs field middleware around every field of a response, scalars of a 100-row list
// included. Installed with srv.AroundFields it costs, per field, a closure the executor builds to
// chain interceptors and two more calls, though the checks return at once for a field without
// arguments outside the root. So it is an operation context mutator instead: it wraps the
// operation's ResolverMiddleware (whatever field interceptors the server has) once per
// operation, and a field costs one call and the checks.
type fieldPolicy struct {
	authorize Authorizer
	ids       idArguments
}

var (
	_ graphql.HandlerExtension        = fieldPolicy{}
	_ graphql.OperationContextMutator = fieldPolicy{}
)

// ExtensionName names the extension to gqlgen.
func (fieldPolicy) ExtensionName() string { return "forkgraph field policy" }

// Validate accepts every schema.
func (fieldPolicy) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext puts the policy in front of the operation's field middleware.
func (p fieldPolicy) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	inner := oc.ResolverMiddleware
	if inner == nil {
		inner = func(ctx context.Context, next graphql.Resolver) (any, error) { return next(ctx) }
	}
	oc.ResolverMiddleware = func(ctx context.Context, next graphql.Resolver) (any, error) {
		if err := p.check(ctx); err != nil {
			return nil, err
		}
		return inner(ctx, next)
	}
	return nil
}

// check runs the policy for the field whose context ctx is.
func (p fieldPolicy) check(ctx context.Context) error {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return nil
	}
	if err := p.ids.resolveIDs(fc); err != nil {
		return err
	}
	return p.authorize.authorizeRootField(ctx, fc)
}

// authorizeRootField is the one place workspace access is decided: every root field names a
// workspace (an argument or its input's; node and nodes in their ids), and the Authorizer must
// allow each. The workspace id itself is checked here too, in open mode as well, so a blank or
// malformed one is BAD_USER_INPUT (reason invalid_id) for reads exactly as for writes.
func (authorize Authorizer) authorizeRootField(ctx context.Context, fc *graphql.FieldContext) error {
	if !isRootObject(fc.Object) || strings.HasPrefix(fc.Field.Name, "__") {
		return nil
	}
	workspaces, err := workspacesOf(fc)
	if err != nil {
		return err
	}
	if len(workspaces) == 0 && authorize != nil {
		return authorize(ctx, "") // reads nothing, but not without a token
	}
	for _, ws := range workspaces {
		if err := forkengine.ValidateID("workspaceId", ws); err != nil {
			return err
		}
		if authorize != nil {
			if err := authorize(ctx, ws); err != nil {
				return err
			}
		}
	}
	return nil
}

// workspacesOf finds the workspaces a root field reads or writes: its workspaceId argument or
// its input's, or, for the Node lookups, the workspace of each id (nodes(ids: []) reads none).
func workspacesOf(fc *graphql.FieldContext) ([]string, error) {
	var ids []string
	switch {
	case fc.Object == "Query" && fc.Field.Name == "node":
		id, _ := fc.Args["id"].(string)
		ids = []string{id}
	case fc.Object == "Query" && fc.Field.Name == "nodes":
		ids, _ = fc.Args["ids"].([]string)
	default:
		ws, ok := workspaceArgument(fc.Args)
		if !ok {
			return nil, fmt.Errorf("root field %s names no workspace", fc.Field.Name)
		}
		return []string{ws}, nil
	}
	var workspaces []string
	seen := map[string]bool{}
	for _, id := range ids {
		ref, err := parseNodeID(fc.Field.Name, id)
		if err != nil {
			return nil, err
		}
		if !seen[ref.WorkspaceID] {
			seen[ref.WorkspaceID] = true
			workspaces = append(workspaces, ref.WorkspaceID)
		}
	}
	return workspaces, nil
}

func isRootObject(name string) bool {
	return name == "Query" || name == "Mutation" || name == "Subscription"
}

// workspaceArgument finds the workspace a root field names: a workspaceId argument, or the
// Workspace() of its input.
func workspaceArgument(args map[string]any) (string, bool) {
	if ws, ok := args["workspaceId"].(string); ok {
		return ws, true
	}
	if in, ok := args["input"].(interface{ Workspace() string }); ok {
		return in.Workspace(), true
	}
	return "", false
}
