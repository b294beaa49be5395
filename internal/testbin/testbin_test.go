package testbin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestBuildGivesARunnableCommandEachTime(t *testing.T) {
	t.Parallel()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	for i, name := range []string{"one", "two"} { // the second is seeded with the first's copy
		bin := filepath.Join(dir, name)
		if err := Build(ctx, root, "./internal/testbin/testdata/hello", bin); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, "world").CombinedOutput()
		if err != nil || string(out) != "hello world\n" {
			t.Fatalf("build %d printed %q (%v), want %q", i, out, err, "hello world\n")
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

// Reuse hands the next build of a key what the last one left, and keeps nothing of a failed one.
func TestReuseSeedsTheNextBuildWithTheLast(t *testing.T) {
	t.Parallel()
	key := fmt.Sprintf("%s %d %d", t.Name(), os.Getpid(), time.Now().UnixNano())
	kept, ok := keptPath(key)
	if !ok {
		t.Fatal("no user cache directory")
	}
	t.Cleanup(func() { _ = os.Remove(kept) })
	dir := t.TempDir()
	write := func(bin, text string) func() error {
		return func() error { return os.WriteFile(bin, []byte(text), 0o755) }
	}
	if err := Reuse(key, filepath.Join(dir, "a"), write(filepath.Join(dir, "a"), "first")); err != nil {
		t.Fatal(err)
	}
	var seeded string
	b := filepath.Join(dir, "b")
	if err := Reuse(key, b, func() error {
		data, err := os.ReadFile(b)
		seeded = string(data)
		if err != nil {
			return err
		}
		return write(b, "second")()
	}); err != nil {
		t.Fatal(err)
	}
	if seeded != "first" {
		t.Fatalf("the second build found %q in its target, want the first build's %q", seeded, "first")
	}
	boom := errors.New("boom")
	if err := Reuse(key, filepath.Join(dir, "c"), func() error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Reuse of a failing build = %v, want its error", err)
	}
	if data, err := os.ReadFile(kept); err != nil || string(data) != "second" {
		t.Fatalf("after a failed build the kept copy is %q (%v), want the last good one", data, err)
	}
}
