// Package testbin gives the process suites (internal/firstrun, internal/multiinstance,
// internal/crashharness, internal/adaptere2e) and the benches an executable of one of this
// module's commands without linking it again on every run.
//
// `go build -o DIR/forkgraph .` into a fresh directory links the server every time: about four
// CPU seconds and a 48 MB write, once per suite and per run, even when nothing changed. But go
// build does not link a target that already exists with the build ID it would give it (the hash
// of every input, flags included). So Build seeds the target with the copy the last build of the
// same package and flags left in a cache directory, runs the same go build, and keeps the result:
// an unchanged tree costs a copy and go's check of its sources, a changed one links once. The
// binary is the one go build makes, byte for byte. Reuse does the same for a build command of
// the test's own (`make build`, a README's go build), which then runs as written.
//
// The cache is a directory per key under the user's cache directory (forkgraph-testbin), one
// file each; removing it costs only the next link.
package testbin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Build runs `go build FLAGS -o BIN PKG` in root, the module's directory (pkg is "." for the
// server, "./examples/provider-adapter"), through Reuse: bin is the caller's file, and an
// unchanged tree is not linked again. A build error returns the compiler's output.
func Build(ctx context.Context, root, pkg, bin string, flags ...string) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	bin, err = filepath.Abs(bin)
	if err != nil {
		return err
	}
	args := append(append([]string{"build"}, flags...), "-o", bin, pkg)
	return Reuse(Key(root, pkg, flags...), bin, func() error {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s in %s: %w\n%s", strings.Join(args, " "), root, err, out)
		}
		return nil
	})
}

// Key is Build's key for `go build FLAGS -o BIN PKG` in root, an absolute path: what another
// command that runs that same build (a README's) passes to Seed and Keep to share its copy.
func Key(root, pkg string, flags ...string) string {
	return strings.Join(append([]string{"go build", root, pkg}, flags...), "\x00")
}

// Reuse runs build, a command that writes the executable bin with go build (directly or through
// make), with bin first seeded from the copy that the last successful build under key kept, so
// that go build finds it up to date instead of linking it again; then it keeps bin's copy under
// key. The key names what is built: the same key must mean the same command in the same tree.
// Build's error is returned as it is.
func Reuse(key, bin string, build func() error) error {
	if err := Seed(key, bin); err != nil {
		return err
	}
	if err := build(); err != nil {
		return err
	}
	return Keep(key, bin)
}

// Seed copies to bin what Keep last kept under key, if anything: Reuse's first half, for a build
// that runs in the background (a script's go build).
func Seed(key, bin string) error {
	kept, ok := keptPath(key)
	if !ok {
		return nil // no cache directory: the build just runs
	}
	if err := copyFile(kept, bin); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("testbin: seed %s: %w", bin, err)
	}
	return nil
}

// Keep keeps a copy of bin, a build's result, for the next Seed under key.
func Keep(key, bin string) error {
	kept, ok := keptPath(key)
	if !ok {
		return nil
	}
	// Written aside and renamed: a concurrent seed reads the old copy or the new one, whole.
	tmp := fmt.Sprintf("%s.%d.tmp", kept, os.Getpid())
	err := copyFile(bin, tmp)
	if err == nil {
		err = os.Rename(tmp, kept)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("testbin: keep %s: %w", bin, err)
	}
	return nil
}

// keptPath is where the copy of key's build is kept, its directory created; false when the user
// has no cache directory.
func keptPath(key string) (string, bool) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", false
	}
	sum := sha256.Sum256([]byte(key))
	dir := filepath.Join(base, "forkgraph-testbin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false
	}
	return filepath.Join(dir, hex.EncodeToString(sum[:12])), true
}

// copyFile copies src to dst, executable, replacing dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	_ = os.Remove(dst) // a new inode: a process may be running the old file
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// ModuleRoot is the directory of the go.mod above the working directory (a test runs in its
// package's directory).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("testbin: no go.mod above %s", dir)
		}
		dir = parent
	}
}
