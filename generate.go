package main

// Regenerates graph/ (the executable schema), models/models_gen.go and the resolver stubs in
// resolvers/ from schema.graphqls and gqlgen.yml.
//go:generate go tool gqlgen generate
