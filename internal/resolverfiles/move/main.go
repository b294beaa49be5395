// Command move puts every resolver declaration of package resolvers in its GraphQL type's file
// (resolverfiles.Move): run `go run ./internal/resolverfiles/move` at the repository root after a
// merge or an edit left some elsewhere, then `go build ./resolvers`.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/forkgraph/forkgraph/internal/resolverfiles"
)

func main() {
	dir := flag.String("dir", "resolvers", "the resolvers package's directory")
	flag.Parse()
	if err := resolverfiles.Move(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "move:", err)
		os.Exit(1)
	}
	left, err := resolverfiles.Misplaced(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "move:", err)
		os.Exit(1)
	}
	for _, d := range left {
		fmt.Fprintf(os.Stderr, "move: %s is still in %s (belongs in %s)\n", d.Name, d.File, d.Want)
	}
	if len(left) > 0 {
		os.Exit(1)
	}
}
