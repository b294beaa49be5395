// Package models holds the GraphQL-facing types of forkgraph: the generated inputs, enums and edges
// (models_gen.go), and hand-written API views of the domain (Session, Turn, Message,
// ForkOperation, Lineage, WorkspaceEvent), connections, opaque cursors and the JSON scalar.
//
// Domain values enter through the From* constructors, which keep the domain value beside the API
// view so resolvers and loaders can hand it back to the engine. Enum values are UPPER_SNAKE on the
// wire and lower_snake in the domain; the mapping is mechanical and lives in enums.go.
package models
