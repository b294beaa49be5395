package resolvers

import (
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/graph"
)

// The committed schema gives every root field the scope issue 22 names, in its directive and in
// the last line of its description.
func TestEveryRootFieldNamesItsScope(t *testing.T) {
	t.Parallel()
	rules, err := readRootRules(graph.NewExecutableSchema(graph.Config{Resolvers: &Resolver{}}).Schema())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]access.Scope{
		"Query.node": access.ScopeRead, "Query.nodes": access.ScopeRead, "Query.session": access.ScopeRead,
		"Query.sessions": access.ScopeRead, "Query.forkOperation": access.ScopeRead, "Query.forkOperations": access.ScopeRead,
		"Query.workspaceEventCursor": access.ScopeRead, "Subscription.forkOperationUpdated": access.ScopeRead,
		"Subscription.workspaceEvents": access.ScopeRead,
		"Mutation.forkSession":         access.ScopeFork, "Mutation.acknowledgeForkOperation": access.ScopeFork,
		"Mutation.reconcileForkOperation": access.ScopeFork, "Mutation.abandonForkOperation": access.ScopeFork,
		"Mutation.reportSession": access.ScopeIngest, "Mutation.reportTurn": access.ScopeIngest,
		"Mutation.appendMessages": access.ScopeIngest, "Mutation.reportInteraction": access.ScopeIngest,
		"Mutation.reportAuditMessage": access.ScopeIngest, "Mutation.deleteSession": access.ScopeAdmin,
		"Query.verifyForkedSession": access.ScopeRead, "Query.workspaceSettings": access.ScopeRead,
		"Mutation.setWorkspaceForking": access.ScopeAdmin,
	}
	for key, rule := range rules {
		name := key.object + "." + key.field
		if name == "Query.viewer" {
			if !rule.anyCredential {
				t.Errorf("viewer needs any valid credential, got %+v", rule)
			}
			continue
		}
		if rule.scope != want[name] {
			t.Errorf("%s needs %q, want %q", name, rule.scope, want[name])
		}
		delete(want, name)
	}
	for name := range want {
		t.Errorf("%s is not in the schema", name)
	}
}

// A root field without a rule, with a bad one, or whose description says otherwise stops the
// server from starting.
func TestRootFieldRulesRefuseAnUndecidedField(t *testing.T) {
	t.Parallel()
	const header = `directive @requiresScope(scope: Scope!) on FIELD_DEFINITION
		directive @authenticated on FIELD_DEFINITION
		enum Scope { READ FORK INGEST ADMIN }
		`
	for name, tc := range map[string]struct{ schema, err string }{
		"no directive":           {`type Query { "Reads.\nRequires scope READ." a: Int }`, "has no @requiresScope"},
		"both directives":        {`type Query { "Requires scope READ." a: Int @requiresScope(scope: READ) @authenticated }`, "has both"},
		"no description line":    {`type Query { "Reads." a: Int @requiresScope(scope: READ) }`, `must end with "Requires scope READ."`},
		"the wrong line":         {`type Query { "Requires scope FORK." a: Int @requiresScope(scope: READ) }`, "must end with"},
		"a mutation unscoped":    {`type Query { "Requires any valid credential." a: Int @authenticated } type Mutation { "Writes." b: Int }`, "Mutation.b"},
		"OK: scope and its line": {`type Query { "Reads.\nRequires scope READ." a: Int @requiresScope(scope: READ) }`, ""},
	} {
		t.Run(name, func(t *testing.T) {
			schema := gqlparser.MustLoadSchema(&ast.Source{Input: header + tc.schema})
			_, err := readRootRules(schema)
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want one containing %q", err, tc.err)
			}
		})
	}
}
