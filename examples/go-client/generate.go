package main

// The client is generated from operations.graphql against the server's schema; `go generate ./...`
// here regenerates it (scripts/check-generated.sh checks it is committed up to date).
//go:generate go tool genqlient genqlient.yaml
