package access_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The edge policy stays free of GraphQL and storage: it imports the standard library,
// golang.org/x/time/rate, go-jose (JWS, JWK, JWT claims) and forkengine's error codes only, so
// resolvers and transports depend on it and not the other way round.
func TestAccessImportsOnlyTheEdge(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	allowed := map[string]bool{
		"github.com/forkgraph/forkgraph/access":     true,
		"github.com/forkgraph/forkgraph/forkengine": true,
		"golang.org/x/time/rate":                    true,
		"github.com/go-jose/go-jose/v4":             true,
		"github.com/go-jose/go-jose/v4/cipher":      true,
		"github.com/go-jose/go-jose/v4/json":        true,
		"github.com/go-jose/go-jose/v4/jwt":         true,
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, standard, _ := strings.Cut(line, " ")
		if standard != "true" && !allowed[path] {
			t.Errorf("access depends on %s", path)
		}
	}
}
