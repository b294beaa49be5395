package resolvers

import (
	"context"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Authorizer decides whether the caller whose context ctx is may use workspace; an error is a
// forkengine.Error (UNAUTHENTICATED, FORBIDDEN). access.Tokens.Authorize is the one forkgraph
// uses; nil allows every workspace (open mode).
type Authorizer func(ctx context.Context, workspace string) error

// fieldPolicy (srv.AroundFields) is the server's one field middleware: workspace access for root
// fields (authorizeRootField), then the id arguments of any field (validateIDArguments). gqlgen
// runs field middleware around every field of a response, scalars of a 100-row list included,
// and each middleware layer costs a call and a closure per field, so the checks share one layer.
func (authorize Authorizer) fieldPolicy(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return next(ctx)
	}
	if err := authorize.authorizeRootField(ctx, fc); err != nil {
		return nil, err
	}
	if err := validateIDArguments(fc); err != nil {
		return nil, err
	}
	return next(ctx)
}

// authorizeRootField is the one place workspace access is decided: every root field names a
// workspace (an argument or its input's), and the Authorizer must allow it. The workspace id
// itself is checked here too, in open mode as well, so a blank or malformed one is
// BAD_USER_INPUT (reason invalid_id) for reads exactly as for writes.
func (authorize Authorizer) authorizeRootField(ctx context.Context, fc *graphql.FieldContext) error {
	if !isRootObject(fc.Object) || strings.HasPrefix(fc.Field.Name, "__") {
		return nil
	}
	ws, ok := workspaceArgument(fc.Args)
	if !ok {
		return fmt.Errorf("root field %s names no workspace", fc.Field.Name)
	}
	if err := forkengine.ValidateID("workspaceId", ws); err != nil {
		return err
	}
	if authorize != nil {
		return authorize(ctx, ws)
	}
	return nil
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
