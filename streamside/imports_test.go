package streamside_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// deps lists the packages args depend on (themselves included), without the standard library.
func deps(t *testing.T, args ...string) map[string]bool {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %v: %v\n%s", args, err, out)
	}
	set := map[string]bool{}
	for _, path := range strings.Fields(string(out)) {
		set[path] = true
	}
	return set
}

// The stream side channel is a leaf between the layer that resolves a stream and the one that
// delivers it: the standard library and gqlgen (with what gqlgen itself needs) only, so both
// resolvers and transports import it and neither has to import the other.
func TestStreamsideImportsOnlyGqlgen(t *testing.T) {
	allowed := deps(t, "github.com/99designs/gqlgen/graphql", "github.com/vektah/gqlparser/v2/gqlerror")
	allowed["github.com/forkgraph/forkgraph/streamside"] = true
	for path := range deps(t, ".") {
		if !allowed[path] {
			t.Errorf("streamside depends on %s", path)
		}
	}
}

// resolvers write a stream's side channel and transports read it: neither depends on the
// other (resolvers used to be handed transports.AddSubscriptionError and SetStreamReadiness
// as function values, which is a dependency too, only wired at run time).
func TestResolversAndTransportsDoNotImportEachOther(t *testing.T) {
	const resolvers, transports = "github.com/forkgraph/forkgraph/resolvers", "github.com/forkgraph/forkgraph/transports"
	if deps(t, resolvers)[transports] {
		t.Errorf("resolvers depends on transports")
	}
	if deps(t, transports)[resolvers] {
		t.Errorf("transports depends on resolvers")
	}
	for _, pkg := range []string{resolvers, transports} {
		if !deps(t, pkg)["github.com/forkgraph/forkgraph/streamside"] {
			t.Errorf("%s does not use streamside: the rule above would hold for want of a side channel", pkg)
		}
	}
}

// Nor are transport functions handed to resolvers at run time: no resolvers.Config literal in
// the wiring (internal/server, which main calls) holds a value of package transports.
func TestWiringHandsResolversNoTransportFunction(t *testing.T) {
	files, err := filepath.Glob("../internal/server/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("the wiring's files: %v", err)
	}
	fset := token.NewFileSet()
	literals := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok || !isSelector(lit.Type, "resolvers", "Config") {
				return true
			}
			literals++
			ast.Inspect(lit, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && isPackage(sel.X, "transports") {
					t.Errorf("%s: resolvers.Config is given transports.%s", fset.Position(sel.Pos()), sel.Sel.Name)
				}
				return true
			})
			return false
		})
	}
	if literals == 0 {
		t.Fatal("no resolvers.Config literal found in the wiring: the check looks in the wrong place")
	}
}

func isSelector(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == name && isPackage(sel.X, pkg)
}

func isPackage(e ast.Expr, pkg string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == pkg
}
