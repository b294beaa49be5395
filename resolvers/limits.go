package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/forkgraph/forkgraph/graph"
	"github.com/forkgraph/forkgraph/models"
)

// Default limits of one operation.
const (
	DefaultComplexityLimit = 50_000
	DefaultDepthLimit      = 12
)

// pageComplexity makes a list cost its page size times its children, so a request's cost follows
// the number of rows it can return.
func pageComplexity(childComplexity int, first *int) int {
	size := models.DefaultPageSize
	if first != nil && *first > 0 {
		size = min(*first, models.MaxPageSize)
	}
	return 1 + size*childComplexity
}

func connectionComplexity(c *graph.ComplexityRoot) {
	c.Query.Sessions = func(child int, _ string, first *int, _ *string, _ *models.SessionFilter) int {
		return pageComplexity(child, first)
	}
	c.Query.ForkOperations = func(child int, _ string, first *int, _ *string, _ *models.ForkOperationFilter) int {
		return pageComplexity(child, first)
	}
	c.Session.Turns = func(child int, first *int, _ *string) int { return pageComplexity(child, first) }
}

// depthLimit rejects operations nested deeper than max fields (fragments included), before any
// resolver runs. Error: COMPLEXITY_LIMIT_EXCEEDED with reason depth_limit.
type depthLimit struct{ max int }

var (
	_ graphql.HandlerExtension        = depthLimit{}
	_ graphql.OperationContextMutator = depthLimit{}
)

func (depthLimit) ExtensionName() string                   { return "DepthLimit" }
func (depthLimit) Validate(graphql.ExecutableSchema) error { return nil }

func (d depthLimit) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if opCtx.Operation == nil {
		return nil
	}
	if depth := selectionDepth(opCtx.Operation.SelectionSet, 0, d.max); depth > d.max {
		err := gqlerror.Errorf("operation is nested deeper than the limit of %d fields", d.max)
		err.Extensions = map[string]any{"code": "COMPLEXITY_LIMIT_EXCEEDED", "reason": "depth_limit"}
		return err
	}
	return nil
}

// selectionDepth returns the depth of the deepest field, stopping once it passes limit (so a
// fragment cycle, which validation rejects anyway, cannot loop).
func selectionDepth(set ast.SelectionSet, depth, limit int) int {
	if depth > limit {
		return depth
	}
	deepest := depth
	for _, sel := range set {
		var d int
		switch s := sel.(type) {
		case *ast.Field:
			d = selectionDepth(s.SelectionSet, depth+1, limit)
		case *ast.InlineFragment:
			d = selectionDepth(s.SelectionSet, depth, limit)
		case *ast.FragmentSpread:
			if s.Definition != nil {
				d = selectionDepth(s.Definition.SelectionSet, depth, limit)
			}
		}
		deepest = max(deepest, d)
	}
	return deepest
}
