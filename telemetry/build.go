package telemetry

import (
	"runtime"
	"runtime/debug"
)

// Build describes the running binary.
type Build struct {
	Version   string // module version, or the -ldflags override; "(devel)" for a local build
	Commit    string // VCS revision, "unknown" when the build recorded none
	Modified  bool   // the work tree had uncommitted changes
	GoVersion string
}

// ReadBuild reads the binary's build information. version, when not empty, overrides the
// module version (set it with -ldflags "-X main.version=v1.2.3").
func ReadBuild(version string) Build {
	b := Build{Version: "(devel)", Commit: "unknown", GoVersion: runtime.Version()}
	if info, ok := debug.ReadBuildInfo(); ok {
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
	return b
}

// String renders the build for -version: "forkgraph v1.2.3 (commit abc, go1.26.8)".
func (b Build) String() string {
	commit := b.Commit
	if b.Modified {
		commit += "+modified"
	}
	return "forkgraph " + b.Version + " (commit " + commit + ", " + b.GoVersion + ")"
}
