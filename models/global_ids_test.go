package models_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/models"
)

func TestGlobalID(t *testing.T) {
	cases := []struct {
		name      string
		typ       models.NodeType
		ws, local string
		want      string
	}{
		{"plain", models.NodeSession, "demo", "billing-refactor", "Session:demo:billing-refactor"},
		{"colon in the local id", models.NodeTurn, "demo", "run:7:turn", "Turn:demo:run%3A7%3Aturn"},
		{"colon in the workspace", models.NodeMessage, "team:a", "m1", "Message:team%3Aa:m1"},
		{"percent is escaped first", models.NodeForkOperation, "w%3A", "%25", "ForkOperation:w%253A:%2525"},
		{"lineage names its operation", models.NodeLineage, "w", "op-1", "Lineage:w:op-1"},
		{"unicode and spaces inside", models.NodeSession, "wörk space", "ä b", "Session:wörk space:ä b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := models.GlobalID(tc.typ, tc.ws, tc.local)
			require.Equal(t, tc.want, got)
			ref, ok := models.ParseGlobalID(got)
			require.True(t, ok)
			require.Equal(t, models.GlobalRef{Type: tc.typ, WorkspaceID: tc.ws, LocalID: tc.local}, ref)
			require.Equal(t, got, ref.String())
		})
	}
}

// Anything that is not exactly what GlobalID writes is not a global id: the API reads it as a
// local id (or, for node(id:), refuses it).
func TestParseGlobalIDRefuses(t *testing.T) {
	for _, id := range []string{
		"", "billing-refactor", "Session", "Session:", "Session:w", "Session:w:", "Session::s",
		"session:w:s", "Workspace:w:s", "Session:w:s:extra", "Session:w:a%zz", "Session:w:a%3a",
		"Session:w:a%", "Session:w%2:s", "Session:w:%41", " Session:w:s",
	} {
		t.Run(id, func(t *testing.T) {
			_, ok := models.ParseGlobalID(id)
			require.False(t, ok)
		})
	}
}

// The same local id in two workspaces is two objects, so two ids (issue 12: one record in a
// normalized client cache before).
func TestGlobalIDsDifferAcrossWorkspaces(t *testing.T) {
	a := (&models.Session{WorkspaceID: "a", LocalID: "s1"}).ID()
	b := (&models.Session{WorkspaceID: "b", LocalID: "s1"}).ID()
	require.NotEqual(t, a, b)
	turn := (&models.Turn{WorkspaceID: "a", LocalID: "s1"}).ID()
	require.NotEqual(t, a, turn, "types are part of the id")
}

// BenchmarkGlobalID measures the cost of the id field of one object (the common case has no
// character to escape).
func BenchmarkGlobalID(b *testing.B) {
	s := &models.Session{WorkspaceID: "demo", LocalID: "billing-refactor-2026-11-29"}
	b.ReportAllocs()
	for b.Loop() {
		_ = s.ID()
	}
}
