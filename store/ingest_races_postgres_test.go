package store

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// outcome names an ingest call's answer the way a client sees it: its code and reason.
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	return fmt.Sprintf("%s/%s", forkengine.ErrorCode(err), forkengine.ErrorReason(err))
}

// racePairs runs n pairs of calls, released at once over both instances: call i goes to session
// "sa" or "sb" by its parity, so the two calls of pair i/2 race for the same id in two sessions.
// It returns how often each outcome came, and an error of each failing outcome.
func (in *twoInstances) racePairs(n int, fn func(e *forkengine.Engine, session string, pair int) error) (map[string]int, map[string]string) {
	var mu sync.Mutex
	outcomes, examples := map[string]int{}, map[string]string{}
	in.together(2*n, func(e *forkengine.Engine, i int) {
		err := fn(e, []string{"sa", "sb"}[i%2], i/2)
		mu.Lock()
		defer mu.Unlock()
		outcomes[outcome(err)]++
		if err != nil {
			examples[outcome(err)] = err.Error()
		}
	})
	return outcomes, examples
}

// Message ids are unique per workspace. Two instances appending one id to turns of two sessions
// at once take different session locks, so only the database sees them meet: the loser must get
// what it gets when it comes second (message_conflict), not the unique violation as an internal
// error.
func TestSameMessageIDInTwoSessionsAtOnceIsAMessageConflict(t *testing.T) {
	in := newTwoInstances(t)
	ctx := context.Background()
	for _, s := range []string{"sa", "sb"} {
		_, err := in.engines[0].ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "w", ID: s, Provider: "scripted"})
		require.NoError(t, err)
		_, err = in.engines[0].ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "w", SessionID: s, ID: s + "-t", Phase: forkengine.PhaseRunning})
		require.NoError(t, err)
	}
	appendOne := func(e *forkengine.Engine, session, id string) error {
		_, err := e.AppendMessages(ctx, forkengine.MessageAppend{WorkspaceID: "w", SessionID: session, TurnID: session + "-t",
			Messages: []forkengine.MessageInput{{ID: id, Role: forkengine.RoleUser, Content: "x"}}})
		return err
	}
	require.NoError(t, appendOne(in.engines[0], "sa", "one-after-the-other"))
	second := outcome(appendOne(in.engines[1], "sb", "one-after-the-other"))
	require.Equal(t, string(forkengine.CodeInvalid)+"/"+forkengine.ReasonMessageConflict, second)

	const pairs = 100
	outcomes, examples := in.racePairs(pairs, func(e *forkengine.Engine, session string, pair int) error {
		return appendOne(e, session, fmt.Sprintf("m%d", pair))
	})
	in.close(t)
	require.Equal(t, pairs, outcomes["ok"], "one winner per id: %v %v", outcomes, examples)
	require.Equal(t, pairs, outcomes[second], "every loser answered as if it came second: %v %v", outcomes, examples)
}

// Two instances reporting one new turn id for two sessions at once take different session locks.
// The insert of the second must not move the first's turn into its session (a success says the
// turn is stored there): it is refused as it is when it comes second, and the turn counts follow
// the rows.
func TestSameNewTurnIDInTwoSessionsAtOnceIsRefused(t *testing.T) {
	in := newTwoInstances(t)
	ctx := context.Background()
	for _, s := range []string{"sa", "sb"} {
		_, err := in.engines[0].ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "w", ID: s, Provider: "scripted"})
		require.NoError(t, err)
	}
	report := func(e *forkengine.Engine, session, id string) error {
		_, err := e.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "w", SessionID: session, ID: id, Phase: forkengine.PhaseRunning})
		return err
	}
	require.NoError(t, report(in.engines[0], "sa", "one-after-the-other"))
	err := report(in.engines[1], "sb", "one-after-the-other")
	require.ErrorContains(t, err, "belongs to another session")
	second := outcome(err)
	require.Equal(t, string(forkengine.CodeInvalid)+"/", second)

	const pairs = 100
	var mu sync.Mutex
	winners := map[string][]string{} // turn id → the sessions whose report of it succeeded
	outcomes, examples := in.racePairs(pairs, func(e *forkengine.Engine, session string, pair int) error {
		id := fmt.Sprintf("t%d", pair)
		err := report(e, session, id)
		if err == nil {
			mu.Lock()
			defer mu.Unlock()
			winners[id] = append(winners[id], session)
		}
		return err
	})
	in.close(t)
	for id, sessions := range winners {
		stored, err := in.dbs[0].GetTurn(ctx, "w", id)
		require.NoError(t, err)
		for _, session := range sessions {
			require.Equal(t, session, stored.SessionID, "turn %s: the report for %s succeeded, but the turn is stored in %s", id, session, stored.SessionID)
		}
	}
	require.Equal(t, pairs, outcomes["ok"], "one winner per id: %v %v", outcomes, examples)
	require.Equal(t, pairs, outcomes[second], "every loser answered as if it came second: %v %v", outcomes, examples)
	requireTurnCountsMatchRows(t, in.dbs[0], "w", "after the race")
}
