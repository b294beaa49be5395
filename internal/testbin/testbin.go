// Package testbin gives the process suites (internal/firstrun, internal/multiinstance,
// internal/crashharness, internal/adaptere2e) and the benches an executable of one of this
// module's commands without linking it again on every run.
//
// `go build -o DIR/forkgraph .` into a fresh directory links the server every time: about four
// CPU seconds and a 48 MB write, once per suite and per run, even when nothing changed. `go run`
// keeps the executables it links in Go's build cache, keyed by everything that went into them,
// so Build asks `go run -exec cp PKG DEST` for it: an unchanged tree costs a cache lookup and a
// copy, a changed one links once, and every suite of one `go test ./...` shares that link.
// The executable is the one `go build` makes, without its DWARF tables (as every `go run` and
// `go test` binary is); the behaviour is the same.
package testbin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Build puts an executable of pkg, a package of the module at root named relative to it ("."
// for the server, "./examples/provider-adapter"), built with the go flags given ("-race"), at the
// path bin. The copy is the caller's: a running test never shares a file that another package's
// run could replace. A build error returns the compiler's output.
func Build(ctx context.Context, root, pkg, bin string, flags ...string) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	args := append(append([]string{"run"}, flags...), "-exec", "cp", pkg, bin)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s in %s: %w\n%s", strings.Join(args, " "), root, err, out)
	}
	return nil
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
			return "", errors.New("testbin: no go.mod above the working directory")
		}
		dir = parent
	}
}
