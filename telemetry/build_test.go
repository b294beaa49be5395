package telemetry

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each way of building the binary names its version or commit in -version.
func TestBuildFromEachKindOfBuild(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name            string
		info            *debug.BuildInfo
		version, commit string
		want            Build
		line            string
	}{
		{name: "GoInstallAtVersion", info: &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}},
			want: Build{Version: "v1.4.0", Commit: "unknown"}, line: "forkgraph v1.4.0 (commit unknown, "},
		{name: "GoBuildInAClone", info: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201201304-63be76768a31"},
			Settings: vcs("63be76768a31e46be008f5463cf9834540c3a7d9", "false")},
			want: Build{Version: "v0.0.0-20261201201304-63be76768a31", Commit: "63be76768a31e46be008f5463cf9834540c3a7d9"},
			line: "forkgraph v0.0.0-20261201201304-63be76768a31 (commit 63be76768a31e46be008f5463cf9834540c3a7d9, "},
		{name: "GoBuildWithChanges", info: &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0+dirty"}, Settings: vcs("abc", "true")},
			want: Build{Version: "v1.4.0+dirty", Commit: "abc", Modified: true}, line: "forkgraph v1.4.0+dirty (commit abc+modified, "},
		{name: "LdflagsWin", info: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("abc", "true")},
			version: "v2.0.0", commit: "def456", want: Build{Version: "v2.0.0", Commit: "def456"}, line: "forkgraph v2.0.0 (commit def456, "},
		{name: "GoRunRecordsNothing", info: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			want: Build{Version: "(devel)", Commit: "unknown"}, line: "forkgraph (devel) (no version or commit recorded: built by go run"},
		{name: "NoBuildInfo", want: Build{Version: "(devel)", Commit: "unknown"}, line: "`make build` records both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := buildFrom(tc.info, tc.version, tc.commit)
			tc.want.GoVersion = runtime.Version()
			require.Equal(t, tc.want, got)
			require.Contains(t, got.String(), tc.line)
			require.Contains(t, got.String(), runtime.Version())
		})
	}
}
