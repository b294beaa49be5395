package testbin

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestBuildCopiesARunnableCommand(t *testing.T) {
	t.Parallel()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("cp"); err != nil {
		t.Fatal("Build needs cp on the PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	for i, name := range []string{"one", "two"} { // the second comes from Go's cache: the same command
		bin := filepath.Join(dir, name)
		if err := Build(ctx, root, "./internal/testbin/testdata/hello", bin); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, "world").CombinedOutput()
		if err != nil || string(out) != "hello world\n" {
			t.Fatalf("build %d: the copy printed %q (%v), want %q", i, out, err, "hello world\n")
		}
	}
}

func TestBuildReportsTheCompilerOutput(t *testing.T) {
	t.Parallel()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	err = Build(context.Background(), root, "./internal/testbin/testdata/nosuchpackage", filepath.Join(t.TempDir(), "x"))
	if err == nil || !strings.Contains(err.Error(), "nosuchpackage") {
		t.Fatalf("Build of a missing package: %v, want an error naming it", err)
	}
}
