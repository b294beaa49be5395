package limits

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/lexer"
	"github.com/vektah/gqlparser/v2/parser"
)

// Document bounds a GraphQL document before gqlgen validates it. Validation and the
// complexity count of gqlgen both expand fragment spreads, so a document whose fragments spread
// each other twice per level is exponentially large once expanded: 1.3 KB can stand for 2^30
// fields. These limits are computed in one pass over the document, each fragment measured once
// and its figures reused wherever it is spread, so refusing even the worst document up to the
// body limit costs time linear in its size. Zero fields take the Default* values.
type Document struct {
	Tokens         int // lexical tokens in the document: TOKEN_LIMIT_EXCEEDED
	Aliases        int // aliased fields written in the document: ALIAS_LIMIT_EXCEEDED
	Directives     int // directives written in the document: DIRECTIVE_LIMIT_EXCEEDED
	RootFields     int // root fields of an operation, fragments expanded: ROOT_FIELD_LIMIT_EXCEEDED
	Fields         int // fields of an operation with fragments expanded: COMPLEXITY_LIMIT_EXCEEDED, reason field_limit
	Depth          int // nesting of ordinary fields: COMPLEXITY_LIMIT_EXCEEDED, reason depth_limit
	Introspections int // __schema and __type fields of an operation: COMPLEXITY_LIMIT_EXCEEDED, reason introspection_limit
	// Overlaps bounds the pairs of fields sharing a response name in one selection set, which the
	// validator compares pairwise: COMPLEXITY_LIMIT_EXCEEDED, reason overlap_limit.
	Overlaps int
}

// Default document limits. The standard introspection query of GraphiQL and codegen tools has
// 160 tokens, no aliases, 1 root field and 217 fields expanded, 15 deep; forkgraph's playground
// and e2e documents stay far below every figure.
const (
	DefaultTokenLimit         = 10_000
	DefaultAliasLimit         = 100
	DefaultDirectiveLimit     = 50
	DefaultRootFieldLimit     = 20
	DefaultFieldLimit         = 2_000
	DefaultIntrospectionLimit = 5
	// DefaultOverlapLimit allows, say, 80 fragments that each select id, __typename and one more
	// field spread into one set (3 × 3,160 pairs); validating 10,000 pairs of fields that have
	// selections of their own costs about 10 ms (BenchmarkDocumentLimits, fragment-same-name).
	DefaultOverlapLimit = 10_000
)

// Codes of the document limits; depth and size keep gqlgen's COMPLEXITY_LIMIT_EXCEEDED.
const (
	CodeTokenLimit      = "TOKEN_LIMIT_EXCEEDED"
	CodeAliasLimit      = "ALIAS_LIMIT_EXCEEDED"
	CodeDirectiveLimit  = "DIRECTIVE_LIMIT_EXCEEDED"
	CodeRootFieldLimit  = "ROOT_FIELD_LIMIT_EXCEEDED"
	CodeComplexityLimit = "COMPLEXITY_LIMIT_EXCEEDED"
)

func (l Document) withDefaults() Document {
	l.Tokens = orDefault(l.Tokens, DefaultTokenLimit)
	l.Aliases = orDefault(l.Aliases, DefaultAliasLimit)
	l.Directives = orDefault(l.Directives, DefaultDirectiveLimit)
	l.RootFields = orDefault(l.RootFields, DefaultRootFieldLimit)
	l.Fields = orDefault(l.Fields, DefaultFieldLimit)
	l.Depth = orDefault(l.Depth, DefaultDepthLimit)
	l.Introspections = orDefault(l.Introspections, DefaultIntrospectionLimit)
	l.Overlaps = orDefault(l.Overlaps, DefaultOverlapLimit)
	return l
}

// DocumentRule returns the gqlgen extension that applies limits (zero fields: the defaults). It
// runs as an OperationParameterMutator, after persisted operations have filled in the document and
// before gqlgen parses and validates it, and refuses with CheckDocument's codes.
func DocumentRule(limits Document) graphql.HandlerExtension {
	return documentLimit{limits: limits.withDefaults()}
}

// documentLimit is the extension DocumentRule returns.
type documentLimit struct{ limits Document }

var (
	_ graphql.HandlerExtension          = documentLimit{}
	_ graphql.OperationParameterMutator = documentLimit{}
)

// ExtensionName and Validate make documentLimit a gqlgen extension.
func (documentLimit) ExtensionName() string                   { return "DocumentLimit" }
func (documentLimit) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters refuses a document over the limits (CheckDocument's codes).
func (d documentLimit) MutateOperationParameters(_ context.Context, params *graphql.RawParams) *gqlerror.Error {
	return CheckDocument(params.Query, d.limits)
}

// CheckDocument applies limits to a GraphQL document in time linear in its length. A document
// that does not lex or parse passes: gqlgen reports it as GRAPHQL_PARSE_FAILED with its position.
func CheckDocument(query string, limits Document) *gqlerror.Error {
	limits = limits.withDefaults()
	src := &ast.Source{Input: query}
	if n, ok := countTokens(src, limits.Tokens); !ok {
		return codedError(CodeTokenLimit, "", "the document has more than %d tokens (%d read)", limits.Tokens, n)
	}
	doc, err := parser.ParseQuery(src)
	if err != nil {
		return nil
	}
	var written writtenCounts
	written.document(doc)
	switch {
	case written.aliases > limits.Aliases:
		return codedError(CodeAliasLimit, "", "the document has %d aliases; the limit is %d", written.aliases, limits.Aliases)
	case written.directives > limits.Directives:
		return codedError(CodeDirectiveLimit, "", "the document has %d directives; the limit is %d", written.directives, limits.Directives)
	}
	m := newCostMeter(doc)
	for _, op := range doc.Operations {
		if err := m.operation(op).check(op, limits); err != nil {
			return err
		}
	}
	// Within the field limit, so the names merged below are bounded too.
	if pairs := newOverlapMeter(doc).document(doc); pairs > limits.Overlaps {
		return codedError(CodeComplexityLimit, "overlap_limit",
			"the document has %s pairs of fields sharing a response name in one selection set; the limit is %d",
			countText(pairs), limits.Overlaps)
	}
	return nil
}

func (c selectionCost) check(op *ast.OperationDefinition, l Document) *gqlerror.Error {
	name := op.Name
	if name == "" {
		name = "(anonymous)"
	}
	switch {
	case c.fields > l.Fields:
		return codedError(CodeComplexityLimit, "field_limit",
			"operation %s selects %s fields once its fragments are expanded; the limit is %d", name, countText(c.fields), l.Fields)
	case c.top > l.RootFields:
		return codedError(CodeRootFieldLimit, "", "operation %s selects %s root fields; the limit is %d", name, countText(c.top), l.RootFields)
	case c.depth > l.Depth:
		return codedError(CodeComplexityLimit, "depth_limit", "operation %s is nested deeper than the limit of %d fields", name, l.Depth)
	case c.introDepth > introspectionDepth:
		return codedError(CodeComplexityLimit, "introspection_limit",
			"introspection is nested deeper than the limit of %d fields", introspectionDepth)
	case c.introRoots > l.Introspections:
		return codedError(CodeComplexityLimit, "introspection_limit",
			"operation %s selects __schema or __type %s times; the limit is %d", name, countText(c.introRoots), l.Introspections)
	}
	return nil
}

// countTokens counts the document's tokens up to limit+1; ok is false beyond limit. A lexical
// error ends the count early (the parser reports it).
func countTokens(src *ast.Source, limit int) (int, bool) {
	lex := lexer.New(src)
	for n := 0; ; n++ {
		tok, err := lex.ReadToken()
		if err != nil || tok.Kind == lexer.EOF {
			return n, true
		}
		if n >= limit {
			return n + 1, false
		}
	}
}

func codedError(code, reason, format string, args ...any) *gqlerror.Error {
	err := gqlerror.Errorf(format, args...)
	err.Extensions = map[string]any{"code": code}
	if reason != "" {
		err.Extensions["reason"] = reason
	}
	return err
}

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// countText prints a saturated count as "more than" the cap.
func countText(n int) string {
	if n >= saturated {
		return "more than a billion"
	}
	return itoa(n)
}
