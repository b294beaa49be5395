package resolvers_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A mutation's root fields run one after another, and each reads what the earlier ones wrote:
// b settles the turn a reported running, so b's turn is forkable and its session's latest turn
// is settled, as a fresh query says. With one loader set for the whole response, b got what a
// had read: RUNNING, not forkable, RECOVERY_REQUIRED.
func TestMutationFieldsReadEarlierFieldsWrites(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	api.seedSession("w", "s", 1, "")
	var out struct {
		A struct {
			Phase                        string
			ProviderForkBindingAvailable bool
			Session                      struct {
				LatestTurn struct{ LocalID, Phase string }
			}
		}
		B struct {
			Phase                        string
			ProviderForkBindingAvailable bool
			ProviderForkBindingState     string
			Session                      struct {
				LatestTurn struct{ LocalID, Phase string }
			}
		}
	}
	api.mustDo(`mutation {
	  a: reportTurn(input: {workspaceId: "w", sessionId: "s", id: "t9", phase: RUNNING,
	       providerTurnId: "p-t9", providerTurnBinding: {handle: "p-t9"}}) {
	    phase providerForkBindingAvailable session { latestTurn { localId phase } } }
	  b: reportTurn(input: {workspaceId: "w", sessionId: "s", id: "t9", phase: SETTLED, outcome: COMPLETED,
	       providerTurnId: "p-t9", providerTurnBinding: {handle: "p-t9"}}) {
	    phase providerForkBindingAvailable providerForkBindingState session { latestTurn { localId phase } } }
	}`, &out, nil)
	require.Equal(t, "RUNNING", out.A.Phase)
	require.False(t, out.A.ProviderForkBindingAvailable)
	require.Equal(t, "RUNNING", out.A.Session.LatestTurn.Phase)
	require.Equal(t, "SETTLED", out.B.Phase)

	var fresh struct {
		Session struct {
			LatestTurn struct {
				Phase                        string
				ProviderForkBindingAvailable bool
			}
		}
	}
	api.mustDo(`{ session(workspaceId: "w", id: "s") { latestTurn { phase providerForkBindingAvailable } } }`, &fresh, nil)
	require.True(t, fresh.Session.LatestTurn.ProviderForkBindingAvailable, "a settled, bound turn is forkable")

	assert.Equal(t, "t9", out.B.Session.LatestTurn.LocalID)
	assert.Equal(t, "SETTLED", out.B.Session.LatestTurn.Phase, "b's session.latestTurn is the turn b just settled")
	assert.True(t, out.B.ProviderForkBindingAvailable, "b's turn is settled and bound")
	assert.Equal(t, "BOUND", out.B.ProviderForkBindingState)
}
