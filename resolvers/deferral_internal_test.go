package resolvers

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// ResolvedLater names exactly the fields gqlgen's generated code resolves concurrently (through
// ResolveConcurrently, which puts a null in a deferred one's place in the first payload):
// resolver fields, and methods that take a context, which this schema has none of. Read from
// graph/generated.go, so a field gqlgen starts resolving on its own cannot drift from it.
func TestResolvedLaterIsWhatGqlgenResolvesConcurrently(t *testing.T) {
	t.Parallel()
	f, err := os.Open("../graph/generated.go")
	require.NoError(t, err)
	defer f.Close()
	object := regexp.MustCompile(`^func \(ec \*executionContext\) _([A-Z]\w*)\(ctx context\.Context, sel ast\.SelectionSet`)
	field := regexp.MustCompile(`^\s*case "(\w+)":$`)
	generated := map[string]bool{}
	var typ, pending string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		if m := object.FindStringSubmatch(line); m != nil {
			typ, pending = m[1], ""
			continue
		}
		if m := field.FindStringSubmatch(line); m != nil {
			pending = m[1]
			continue
		}
		if pending != "" && strings.Contains(line, "out.ResolveConcurrently(") && !strings.HasPrefix(typ, "_") {
			generated[typ+"."+pending] = true
		}
		pending = ""
	}
	require.NotEmpty(t, generated)

	schema := Schema()
	reflected := map[string]bool{}
	for _, def := range schema.Types {
		for _, fd := range def.Fields {
			if ResolvedLater(def.Name, fd.Name) {
				reflected[def.Name+"."+fd.Name] = true
			}
		}
	}
	require.Equal(t, generated, reflected)
	require.True(t, ResolvedLater("Session", "lifecycleCapabilities"))
	require.False(t, ResolvedLater("Session", "title"))
	require.False(t, ResolvedLater("Query", "session"), "root fields are never deferred")
}
