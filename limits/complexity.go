package limits

import (
	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"

	"github.com/forkgraph/forkgraph/graph"
	"github.com/forkgraph/forkgraph/models"
)

// Default limits of one operation.
const (
	DefaultComplexityLimit = 50_000
	DefaultDepthLimit      = 12
)

// ComplexityRule returns gqlgen's fixed complexity limit at limit (zero: DefaultComplexityLimit),
// counted with the field costs Complexity installs: COMPLEXITY_LIMIT_EXCEEDED beyond it.
func ComplexityRule(limit int) graphql.HandlerExtension {
	return extension.FixedComplexityLimit(orDefault(limit, DefaultComplexityLimit))
}

// pageComplexity makes a list cost its page size (`first`, else `last`) times its children, so a
// request's cost follows the number of rows it can return.
func pageComplexity(childComplexity int, first, last *int) int {
	size := models.DefaultPageSize
	for _, n := range []*int{last, first} {
		if n != nil && *n >= 0 {
			size = min(*n, models.MaxPageSize)
		}
	}
	return 1 + size*childComplexity
}

// SearchComplexity is what a search adds to its sessions field: it reads an index per word and
// walks the rarest word's rows, so twenty searches in one document (the root field limit) cost
// 20,000 of the 50,000 a document may spend, and aliases cannot fan one out past that.
const SearchComplexity = 1_000

// Complexity installs forkgraph's field costs in c: a connection costs its page size times its
// children, a search adds SearchComplexity, nodes(ids:) costs as many objects as it has ids (at
// most maxNodeIDs, beyond which the resolver refuses the list).
func Complexity(c *graph.ComplexityRoot, maxNodeIDs int) {
	c.Query.Sessions = func(child int, _ string, first *int, _ *string, last *int, _ *string, _ *models.SessionFilter, search *string) int {
		cost := pageComplexity(child, first, last)
		if search != nil && *search != "" {
			cost += SearchComplexity
		}
		return cost
	}
	c.Query.ForkOperations = func(child int, _ string, first *int, _ *string, last *int, _ *string, _ *models.ForkOperationFilter) int {
		return pageComplexity(child, first, last)
	}
	c.Session.Turns = func(child int, first *int, _ *string, last *int, _ *string) int {
		return pageComplexity(child, first, last)
	}
	c.Session.MessagesConnection = func(child int, first *int, _ *string, last *int, _ *string) int {
		return pageComplexity(child, first, last)
	}
	c.Session.ForksConnection = func(child int, first *int, _ *string, last *int, _ *string) int {
		return pageComplexity(child, first, last)
	}
	c.Turn.MessagesConnection = func(child int, first *int, _ *string, last *int, _ *string) int {
		return pageComplexity(child, first, last)
	}
	// nodes is a list of as many objects as it has ids.
	c.Query.Nodes = func(child int, ids []string) int { return 1 + min(len(ids), maxNodeIDs)*child }
}
