package main

// Regenerates graph/ (the executable schema) and models/models_gen.go from schema.graphqls and
// gqlgen.yml. Resolvers are hand-written, one file per GraphQL type (see gqlgen.yml).
//go:generate go tool gqlgen generate
