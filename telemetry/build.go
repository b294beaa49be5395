package telemetry

import (
	"runtime"
	"runtime/debug"
)

// Build describes the running binary.
type Build struct {
	Version   string // the release: -ldflags, else the module version; "(devel)" when neither says
	Commit    string // VCS revision: -ldflags, else the build's VCS stamp; "unknown" when neither says
	Modified  bool   // the work tree had uncommitted changes (VCS stamp)
	GoVersion string
}

// ReadBuild reads the binary's build information. version and commit, when not empty, win over
// what the build recorded (a release sets them with -ldflags "-X main.version=v1.2.3 -X
// main.commit=<sha>"; `make build` does).
func ReadBuild(version, commit string) Build {
	info, _ := debug.ReadBuildInfo()
	return buildFrom(info, version, commit)
}

// buildFrom reads a build's version and commit the way it was built:
//   - `go install module@v1.2.3`: the module version, v1.2.3, and no commit;
//   - `go build` in a git clone (VCS stamping, on by default there): Go 1.24 and later set the
//     module version from the tag or as a pseudo-version (v0.0.0-<time>-<commit>), with
//     "+dirty" for uncommitted changes, and vcs.revision names the commit;
//   - `go run`, `-buildvcs=false` or a git worktree: none of that, "(devel)" and "unknown";
//   - -ldflags (a release, `make build`): version and commit as given, over the above.
func buildFrom(info *debug.BuildInfo, version, commit string) Build {
	b := Build{Version: "(devel)", Commit: "unknown", GoVersion: runtime.Version()}
	if info != nil {
		if info.Main.Version != "" {
			b.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if version != "" {
		b.Version = version
	}
	if commit != "" {
		b.Commit, b.Modified = commit, false
	}
	return b
}

// String renders the build for -version: "forkgraph v1.2.3 (commit abc, go1.26.8)". A build that
// recorded neither version nor commit says how to get them.
func (b Build) String() string {
	if b.Version == "(devel)" && b.Commit == "unknown" {
		return "forkgraph (devel) (no version or commit recorded: built by go run, in a git worktree or with " +
			"-buildvcs=false; `make build` records both; " + b.GoVersion + ")"
	}
	commit := b.Commit
	if b.Modified {
		commit += "+modified"
	}
	return "forkgraph " + b.Version + " (commit " + commit + ", " + b.GoVersion + ")"
}
