package resolvers_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// SPEC §5: a lineage's sessions and turns are null when deleted, so a graph drawn from lineages
// never shows a soft-deleted session; the other end stays.
func TestLineageEndsAreNullWhenDeleted(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	api.seedSession("w", "src", 2, "")
	api.forkAndCommit("w", "src", "src-t1", "r1")

	type end struct{ ID string }
	var resp struct {
		Session struct {
			Forks []struct {
				TargetSessionID string
				SourceSession   *end
				TargetSession   *end
				SourceTurn      *end
				TargetTurn      *end
			}
		}
	}
	query := `{ session(workspaceId: "w", id: "src") { forks { targetSessionId
		sourceSession { id } targetSession { id } sourceTurn { id } targetTurn { id } } } }`
	api.mustDo(query, &resp, nil)
	require.Len(t, resp.Session.Forks, 1)
	fork := resp.Session.Forks[0]
	require.NotNil(t, fork.TargetSession, "a live target is shown")
	require.NotNil(t, fork.TargetTurn)

	var deleted struct{ DeleteSession bool }
	api.mustDo(`mutation($id: ID!) { deleteSession(workspaceId: "w", id: $id) }`, &deleted,
		map[string]any{"id": fork.TargetSessionID})
	require.True(t, deleted.DeleteSession)

	api.mustDo(query, &resp, nil)
	fork = resp.Session.Forks[0]
	require.Nil(t, fork.TargetSession, "a soft-deleted target is null")
	require.Nil(t, fork.TargetTurn, "so is its boundary turn")
	require.Equal(t, sessionGID("w", "src"), fork.SourceSession.ID, "the live source stays")
	require.Equal(t, turnGID("w", "src-t1"), fork.SourceTurn.ID)
}
