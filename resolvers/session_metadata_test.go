package resolvers_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

const reportMetadataMutation = `mutation($md: JSON, $title: String) { reportSession(input: {workspaceId: "w",
	id: "s1", provider: "simulated", title: $title, metadata: $md}) { title metadata } }`

// A session's metadata is reported with reportSession, projected on Session, kept by a report
// that omits it, and refused unless it is a JSON object, with nothing changed.
func TestSessionMetadata(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	var s struct {
		ReportSession struct {
			Title    string
			Metadata map[string]any
		}
	}
	api.mustDo(reportMetadataMutation, &s, map[string]any{"title": "first"})
	require.Nil(t, s.ReportSession.Metadata, "no metadata reported: null")

	api.mustDo(reportMetadataMutation, &s, map[string]any{"md": map[string]any{"goal": "ship", "tags": []string{"a"}}})
	require.Equal(t, map[string]any{"goal": "ship", "tags": []any{"a"}}, s.ReportSession.Metadata)

	api.mustDo(reportMetadataMutation, &s, map[string]any{"title": "second"})
	require.Equal(t, "second", s.ReportSession.Title)
	require.Equal(t, map[string]any{"goal": "ship", "tags": []any{"a"}}, s.ReportSession.Metadata, "omitted: kept")

	before := api.tableDigest()
	for _, bad := range []any{[]int{1}, "text", 3} {
		api.expectCode("BAD_USER_INPUT", reportMetadataMutation, map[string]any{"md": bad, "title": "changed"})
	}
	require.Equal(t, before, api.tableDigest(), "refusals change nothing")
}
