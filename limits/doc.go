// Package limits holds forkgraph's rules for what one GraphQL document may cost, as gqlgen
// extensions (the way persisted/ holds persisted documents): DocumentRule bounds a document before
// it is parsed and validated (tokens, aliases, directives, root fields, fields with fragments
// expanded, depth, introspections, overlapping names), in time linear in its size; Complexity
// installs the field costs that gqlgen's ComplexityRule counts (a connection costs its page
// size); IntrospectionRule refuses introspection that re-enters a member list. The resolvers
// package installs all three in NewServer.
//
// Refusals carry extensions.code TOKEN_LIMIT_EXCEEDED, ALIAS_LIMIT_EXCEEDED,
// DIRECTIVE_LIMIT_EXCEEDED, ROOT_FIELD_LIMIT_EXCEEDED or COMPLEXITY_LIMIT_EXCEEDED (with a reason:
// field_limit, depth_limit, introspection_limit, overlap_limit) and change nothing: no resolver
// has run.
package limits
