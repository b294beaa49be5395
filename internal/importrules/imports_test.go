package importrules

import (
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/forkgraph/forkgraph/"

// rule is what one layer may depend on: the forkgraph packages (all it reaches, not only what it
// imports directly), and the third-party infrastructure it must not reach at all.
type rule struct {
	pkg       string
	may       []string // forkgraph packages, relative to the module
	forbidden []string // substrings of third-party import paths
}

// The layers of CONVENTIONS.md. Data flows one way (transport → resolver → engine → store), so
// no layer reaches one above it: the store and the drivers know the domain only, the views and
// the document limits no storage or transport, transports no resolver, and resolvers no store,
// driver or transport (they are handed the engine; gqlgen itself brings its own websocket).
var rules = []rule{
	{pkg: "store", may: []string{"forkengine"}, forbidden: []string{"gqlgen", "gqlparser", "websocket"}},
	{pkg: "providers/simulated", may: []string{"forkengine"}, forbidden: []string{"gorm", "gqlgen", "websocket"}},
	{pkg: "providers/webhook", may: []string{"forkengine"}, forbidden: []string{"gorm", "gqlgen", "websocket"}},
	{pkg: "models", may: []string{"forkengine"}, forbidden: []string{"gorm", "gqlgen", "websocket"}},
	// The complexity rules are functions of the generated ComplexityRoot over the models' inputs.
	{pkg: "limits", may: []string{"forkengine", "models", "graph"}, forbidden: []string{"gorm", "websocket"}},
	{pkg: "persisted", forbidden: []string{"gorm", "websocket"}},
	{pkg: "transports", may: []string{"streamside"}, forbidden: []string{"gorm"}},
	{pkg: "resolvers", may: []string{"forkengine", "models", "graph", "limits", "streamside", "access"},
		forbidden: []string{"gorm", "pgx", "sqlite"}},
	// Telemetry observes the others through their seams, transports' Observer among them.
	{pkg: "telemetry", may: []string{"forkengine", "streamside", "transports"}, forbidden: []string{"gorm"}},
}

func TestLayersImportOnlyWhatTheHouseAllows(t *testing.T) {
	pkgs := make([]string, len(rules))
	for i, r := range rules {
		pkgs[i] = module + r.pkg
	}
	deps := listDeps(t, pkgs)
	for _, r := range rules {
		allowed := map[string]bool{}
		for _, p := range r.may {
			allowed[module+p] = true
		}
		got, ok := deps[module+r.pkg]
		if !ok {
			t.Errorf("go list did not list %s: the rule names no package", r.pkg)
			continue
		}
		for _, dep := range got {
			if internal, ok := strings.CutPrefix(dep, module); ok {
				if !allowed[dep] {
					t.Errorf("%s depends on %s; it may depend on %v only", r.pkg, internal, r.may)
				}
				continue
			}
			for _, f := range r.forbidden {
				if strings.Contains(dep, f) {
					t.Errorf("%s depends on %s (no %s in this layer)", r.pkg, dep, f)
				}
			}
		}
	}
}

// The rule finds what it is meant to: the API layer does reach the engine, the views and the
// stream leaf, so an empty listing cannot pass for a clean one.
func TestListDepsSeesTheLayers(t *testing.T) {
	deps := listDeps(t, []string{module + "resolvers"})[module+"resolvers"]
	for _, want := range []string{"forkengine", "models", "streamside", "graph"} {
		if !slices.Contains(deps, module+want) {
			t.Errorf("go list shows no dependency of resolvers on %s: %v", want, deps)
		}
	}
}

// listDeps is every non-standard package each of pkgs depends on, directly or not.
func listDeps(t *testing.T, pkgs []string) map[string][]string {
	t.Helper()
	args := append([]string{"list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`}, pkgs...)
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		var external []string
		for _, dep := range fields[1:] {
			if first, _, _ := strings.Cut(dep, "/"); strings.Contains(first, ".") {
				external = append(external, dep) // a standard package's first element has no dot
			}
		}
		sort.Strings(external)
		deps[fields[0]] = external
	}
	return deps
}
