package resolvers_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/simulated"
	"github.com/forkgraph/forkgraph/resolvers"
	"github.com/forkgraph/forkgraph/store"
)

// BenchmarkSessionsPageIDs measures the id paths of a list: a page of 200 sessions and their
// latest turns, ids only (the global id is computed per object when selected, and every root
// argument of type ID goes through the id middleware).
func BenchmarkSessionsPageIDs(b *testing.B) {
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{Driver: "sqlite", DSN: filepath.Join(b.TempDir(), "bench.db"), Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	engine, err := forkengine.New(forkengine.Config{Store: db, NoBackground: true, Logger: quiet,
		Drivers: map[string]forkengine.Driver{"simulated": simulated.New(simulated.Options{})}})
	if err != nil {
		b.Fatal(err)
	}
	defer engine.Close(ctx)
	for i := range 200 {
		id := fmt.Sprintf("s%03d", i)
		if _, err := engine.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "w", ID: id, Provider: "simulated"}); err != nil {
			b.Fatal(err)
		}
		if _, err := engine.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "w", SessionID: id, ID: id + "-t1", Phase: forkengine.PhaseRunning}); err != nil {
			b.Fatal(err)
		}
	}
	srv := resolvers.NewServer(resolvers.Config{Engine: engine, Logger: quiet})
	srv.AddTransport(transport.POST{})
	c := client.New(srv)
	const query = `{ sessions(workspaceId: "w", first: 200) { edges { node { id latestTurn { id } } } } }`
	b.ReportAllocs()
	for b.Loop() {
		var out struct {
			Sessions struct {
				Edges []struct {
					Node struct {
						ID         string
						LatestTurn struct{ ID string }
					}
				}
			}
		}
		c.MustPost(query, &out)
		if len(out.Sessions.Edges) != 200 {
			b.Fatalf("%d edges", len(out.Sessions.Edges))
		}
	}
}
