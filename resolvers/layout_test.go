package resolvers_test

import (
	"testing"

	"github.com/forkgraph/forkgraph/internal/resolverfiles"
)

// TestResolversLiveInTheirTypesFile: every resolver method, resolver type and root constructor is
// in its GraphQL type's file (sessionResolver.Turns in session.go), so a reader finds a field's
// resolver by its type's name and a new field has one place to go. gqlgen writes no resolvers here
// (gqlgen.yml); `go run ./internal/resolverfiles/move` puts strays where they belong.
func TestResolversLiveInTheirTypesFile(t *testing.T) {
	t.Parallel()
	misplaced, err := resolverfiles.Misplaced(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range misplaced {
		t.Errorf("%s is in %s; it belongs in %s (go run ./internal/resolverfiles/move)", d.Name, d.File, d.Want)
	}
}
