package resolvers_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

const reportRailProjectPath = `mutation($path: String, $title: String) { reportSession(input: {workspaceId: "w",
	id: "src", provider: "simulated", providerSessionId: "p-src", title: $title, railProjectPath: $path}) { title railProjectPath } }`

// A session's railProjectPath (reference §1.1) is reported with reportSession, projected on
// Session, kept by a report that omits it, refused when it is not storable text with nothing
// changed, and copied to a fork's child: on SQLite and on PostgreSQL, where the fork reads it
// back from the snapshot frozen at prepare in each one's encoding.
func TestSessionRailProjectPath(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]apiOptions{
		"SQLite":   {engine: noBackground},
		"Postgres": {engine: noBackground, postgres: true},
	} {
		t.Run(name, func(t *testing.T) {
			api := newTestAPI(t, opts)
			var s struct {
				ReportSession struct {
					Title           string
					RailProjectPath *string
				}
			}
			api.mustDo(reportRailProjectPath, &s, map[string]any{"title": "first"})
			require.Nil(t, s.ReportSession.RailProjectPath, "none reported: null")

			const path = "/home/me/projects/app & <web>"
			api.mustDo(reportRailProjectPath, &s, map[string]any{"path": path})
			require.Equal(t, path, *s.ReportSession.RailProjectPath)
			api.mustDo(reportRailProjectPath, &s, map[string]any{"title": "second"})
			require.Equal(t, "second", s.ReportSession.Title)
			require.Equal(t, path, *s.ReportSession.RailProjectPath, "omitted: kept")

			before := api.tableDigest()
			got := api.expectCode("BAD_USER_INPUT", reportRailProjectPath, map[string]any{"path": "a\x00b", "title": "changed"})
			require.Equal(t, "invalid_text", got.Extensions["reason"], "%+v", got)
			require.Equal(t, before, api.tableDigest(), "a refusal changes nothing")

			api.seedTurn("w", "src", "src-t1", "settled")
			api.forkAndCommit("w", "src", "src-t1", "req-1")
			var graph struct {
				Session struct {
					Forks []struct {
						TargetSession struct{ RailProjectPath *string }
					}
				}
			}
			api.mustDo(`{ session(workspaceId: "w", id: "src") { forks { targetSession { railProjectPath } } } }`, &graph, nil)
			require.Len(t, graph.Session.Forks, 1)
			require.NotNil(t, graph.Session.Forks[0].TargetSession.RailProjectPath)
			require.Equal(t, path, *graph.Session.Forks[0].TargetSession.RailProjectPath, "a fork's child copies it")
		})
	}
}
