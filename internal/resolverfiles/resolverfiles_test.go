package resolverfiles_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/internal/resolverfiles"
)

func TestFileFor(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"sessionResolver": "session.go", "sessionConnectionResolver": "session.go",
		"forkOperationResolver": "fork_operation.go", "workspaceEventResolver": "workspace_event.go",
	} {
		got, ok := resolverfiles.FileFor(name)
		require.True(t, ok, name)
		require.Equal(t, want, got, name)
	}
	for _, name := range []string{"Resolver", "loaders", "SessionResolver"} {
		_, ok := resolverfiles.FileFor(name)
		require.False(t, ok, name)
	}
}

// TestMove: what gqlgen used to write in one file (and what a merge may bring in any file) is put
// in each type's file, types and constructors first, with the imports each needs; the emptied
// file is removed and a file already in place keeps its own declarations.
func TestMove(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, src string) { require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644)) }
	write("schema.resolvers.go", `package resolvers

import (
	"context"
	"strings"

	"example.com/graph"
)

// Title upper-cases the title.
func (r *sessionResolver) Title(ctx context.Context) string { return strings.ToUpper("t") }

func (r *turnResolver) Phase(ctx context.Context) string { return "SETTLED" }

func (r *Resolver) Session() graph.SessionResolver { return &sessionResolver{r} }

type (
	sessionResolver struct{ *Resolver }
	turnResolver    struct{ *Resolver }
)
`)
	write("turn.go", "package resolvers\n\n// kept stays where it is.\nfunc kept() {}\n")
	write("resolver.go", "package resolvers\n\n// Resolver is the root.\ntype Resolver struct{}\n")
	require.NoError(t, resolverfiles.Move(dir))

	left, err := resolverfiles.Misplaced(dir)
	require.NoError(t, err)
	require.Empty(t, left)
	require.NoFileExists(t, filepath.Join(dir, "schema.resolvers.go"))
	session, err := os.ReadFile(filepath.Join(dir, "session.go"))
	require.NoError(t, err)
	require.Contains(t, string(session), "import (\n\t\"context\"\n\t\"strings\"\n\n\t\"example.com/graph\"\n)")
	require.Contains(t, string(session), "// Title upper-cases the title.\nfunc (r *sessionResolver) Title")
	require.Less(t, strings.Index(string(session), "type sessionResolver"), strings.Index(string(session), "func (r *sessionResolver)"))
	turn, err := os.ReadFile(filepath.Join(dir, "turn.go"))
	require.NoError(t, err)
	require.Contains(t, string(turn), "func kept() {}")
	require.Contains(t, string(turn), "func (r *turnResolver) Phase")
	require.NotContains(t, string(turn), "\"strings\"")
}
