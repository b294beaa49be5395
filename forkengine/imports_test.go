package forkengine_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The domain must stay free of infrastructure: storage, GraphQL and transports depend on it, never
// the other way round.
func TestImportsOnlyStandardLibrary(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	forbidden := []string{"gorm", "gqlgen", "gqlparser", "net/http", "websocket"}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, standard, _ := strings.Cut(line, " ")
		for _, f := range forbidden {
			if strings.Contains(path, f) {
				t.Errorf("forkengine depends on %s", path)
			}
		}
		if standard != "true" && path != "github.com/forkgraph/forkgraph/forkengine" {
			t.Errorf("forkengine depends on non-standard package %s", path)
		}
	}
}
