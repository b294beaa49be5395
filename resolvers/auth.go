package resolvers

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/forkengine"
)

// Identify returns the caller whose context ctx is: access.Authenticator.Identify, the one way
// the GraphQL layer learns who is asking. An error is an *access.Error (UNAUTHENTICATED, with
// the reason the credential was refused). nil: open mode, every caller is access.OpenPrincipal.
type Identify func(ctx context.Context) (access.Principal, error)

// caller returns the principal of ctx.
func (identify Identify) caller(ctx context.Context) (access.Principal, error) {
	if identify == nil {
		return access.OpenPrincipal(), nil
	}
	return identify(ctx)
}

// fieldPolicy is the server's one field middleware: the id arguments of any field first
// (idArguments.resolveIDs: a malformed id is BAD_USER_INPUT before any FORBIDDEN, and global ids
// are local from here on), then, for root fields, the caller's workspaces and scopes
// (authorizeRootField). As every transport (POST, GET, both websocket protocols, SSE in both
// modes) and every way of naming a document (APQ, trusted documents) ends in the same executor,
// this is where each of them is checked.
//
// gqlgen runs field middleware around every field of a response, scalars of a 100-row list
// included. Installed with srv.AroundFields it costs, per field, a closure the executor builds to
// chain interceptors and two more calls, though the checks return at once for a field without
// arguments outside the root. So it is an operation context mutator instead: it wraps the
// operation's ResolverMiddleware (whatever field interceptors the server has) once per
// operation, and a field costs one call and the checks.
type fieldPolicy struct {
	identify Identify
	rules    rootRules
	now      func() time.Time
	ids      idArguments
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
	return p.authorizeRootField(ctx, fc)
}

// authorizeRootField is the one place access is decided: every root field names a workspace (an
// argument or its input's; node and nodes in their ids) and needs a scope (its @requiresScope),
// and the caller must have both (access.Principal.Authorize); a field marked @authenticated
// (viewer) needs only a valid credential. The workspace id itself is checked here too, in open
// mode as well, so a blank or malformed one is BAD_USER_INPUT (reason invalid_id) for reads
// exactly as for writes. A refusal happens before the resolver runs, so it changes nothing.
func (p fieldPolicy) authorizeRootField(ctx context.Context, fc *graphql.FieldContext) error {
	if !isRootObject(fc.Object) || strings.HasPrefix(fc.Field.Name, "__") {
		return nil
	}
	rule, ok := p.rules[fieldKey{fc.Object, fc.Field.Name}]
	if !ok {
		return fmt.Errorf("root field %s.%s has no access rule", fc.Object, fc.Field.Name) // readRootRules saw to it
	}
	var workspaces []string
	if !rule.anyCredential {
		var err error
		if workspaces, err = workspacesOf(fc); err != nil {
			return err
		}
		for _, ws := range workspaces {
			if err := forkengine.ValidateID("workspaceId", ws); err != nil {
				return err
			}
		}
	}
	caller, err := p.identify.caller(ctx)
	if err != nil {
		return err
	}
	now := p.now()
	if len(workspaces) == 0 {
		return caller.Authorize(now, "", rule.scope) // reads nothing, but not without a credential
	}
	for _, ws := range workspaces {
		if err := caller.Authorize(now, ws, rule.scope); err != nil {
			return err
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
