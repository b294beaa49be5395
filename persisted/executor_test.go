package persisted

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// refuseAll is a post-validation check, like the complexity limit, that refuses every operation.
type refuseAll struct{}

func (refuseAll) ExtensionName() string                   { return "RefuseAll" }
func (refuseAll) Validate(graphql.ExecutableSchema) error { return nil }
func (refuseAll) MutateOperationContext(context.Context, *graphql.OperationContext) *gqlerror.Error {
	return &gqlerror.Error{Message: "too complex", Extensions: map[string]any{"code": "COMPLEXITY_LIMIT_EXCEEDED"}}
}

// execute runs params through exec as a transport does (dispatching only what was accepted)
// and returns the first error's code, "" when the operation ran.
func execute(exec *executor.Executor, params *graphql.RawParams) string {
	ctx := graphql.StartOperationTrace(context.Background())
	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		code, _ := errs[0].Extensions["code"].(string)
		return code
	}
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	if resp := responses(ctx); len(resp.Errors) > 0 {
		code, _ := resp.Errors[0].Extensions["code"].(string)
		return code
	}
	return ""
}

// Registered first, as it must be (it fills in the document), Operations still remembers a
// document only when every check has accepted it, those registered after it included: a
// document the complexity limit refuses leaves its hash unknown.
func TestAPQRemembersOnlyDocumentsEveryCheckAccepts(t *testing.T) {
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: `type Query { hello: String }`})
	mock := &graphql.ExecutableSchemaMock{
		SchemaFunc:     func() *ast.Schema { return schema },
		ComplexityFunc: func(context.Context, string, string, int, map[string]any) (int, bool) { return 1, true },
		ExecFunc: func(context.Context) graphql.ResponseHandler {
			return graphql.OneShot(&graphql.Response{Data: json.RawMessage(`{"hello":"world"}`)})
		},
	}
	for name, c := range map[string]struct {
		checks     []graphql.HandlerExtension
		sent, bare string // codes of the document sent with its hash, then of the hash alone
	}{
		"a later check refuses": {[]graphql.HandlerExtension{refuseAll{}}, "COMPLEXITY_LIMIT_EXCEEDED", CodeNotFound},
		"every check accepts":   {nil, "", ""},
	} {
		t.Run(name, func(t *testing.T) {
			exec := executor.New(mock)
			exec.Use(New(Options{APQEntries: 10}))
			for _, check := range c.checks {
				exec.Use(check)
			}
			const query = "{ hello }"
			require.Equal(t, c.sent, execute(exec, &graphql.RawParams{Query: query, Extensions: pq(sha256Hex(query))}))
			require.Equal(t, c.bare, execute(exec, &graphql.RawParams{Extensions: pq(sha256Hex(query))}), "the hash alone")
		})
	}
}
