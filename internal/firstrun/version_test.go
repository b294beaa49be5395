package firstrun

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/forkgraph/forkgraph/internal/testbin"
)

// Issue 27, item 10: -version names the version or the commit however the binary was built. The
// build information of `go install module@version`, of a `go build` with VCS stamping and of
// `go run` (which records neither) is read by telemetry's TestBuildFromEachKindOfBuild; here the
// release path, `make build`, runs for real.
func TestVersionNamesTheBuild(t *testing.T) {
	t.Parallel()
	head := gitHead(t)

	// `make build` stamps the version and commit with -ldflags, as a release does.
	t.Run("MakeBuild", func(t *testing.T) {
		bin := filepath.Join(t.TempDir(), "forkgraph")
		// Seeded with the last run's binary (internal/testbin): make's go build links it again
		// only when its inputs, the stamps among them, changed.
		if err := testbin.Reuse(absRoot(t)+" make build VERSION=v1.2.3-make", bin, func() error {
			if out, err := command(t, repoRoot, "make", "build", "VERSION=v1.2.3-make", "OUT="+bin).CombinedOutput(); err != nil {
				return fmt.Errorf("make build: %v\n%s", err, out)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		commit := head
		if commit == "" {
			commit = "unknown"
		}
		requireVersion(t, bin, "forkgraph v1.2.3-make (commit "+commit+", "+runtime.Version()+")")
	})
}

// gitHead is the commit checked out at the repository root, or "" outside a git checkout.
func gitHead(t *testing.T) string {
	t.Helper()
	out, err := command(t, repoRoot, "git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func versionOf(t *testing.T, bin string) string {
	t.Helper()
	r := runIn(t, t.TempDir(), bin, "-version")
	if r.code != 0 {
		t.Fatalf("-version: exit status %d: %s", r.code, r.stderr)
	}
	return strings.TrimSpace(r.stdout)
}

func requireVersion(t *testing.T, bin, want string) {
	t.Helper()
	if got := versionOf(t, bin); got != want {
		t.Errorf("-version printed %q, want %q", got, want)
	}
}
