package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// A fork of a prefix that holds no message commits in the statements of a fork of one that
// holds messages: the snapshot says the freeze counted none (Snapshot.PrefixCounted), so the
// commit stores the 0 with the History instead of counting the segments' messages again (one
// more statement, a sum over every prefix turn, when 0 also meant "not counted"). At prefixes of
// 10 and 300 turns. On both drivers.
func TestCountedEmptyPrefixIsNotCountedAgain(t *testing.T) {
	t.Run(DriverSQLite, func(t *testing.T) { testCountedEmptyPrefix(t, migratedSQLite) })
	t.Run(DriverPostgres, func(t *testing.T) {
		requirePostgres(t)
		testCountedEmptyPrefix(t, postgresConfig)
	})
}

func testCountedEmptyPrefix(t *testing.T, config func(testing.TB) Config) {
	ctx := context.Background()
	commits := map[string]int64{}
	for _, turns := range []int{10, 300} {
		db := openTest(t, config(t))
		e := chainEngine(t, db)
		for _, messages := range []int{0, 2} {
			session := fmt.Sprintf("s%d", messages)
			psid := "p-" + session
			_, err := e.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "ws", ID: session, Provider: "scripted", ProviderSessionID: &psid})
			require.NoError(t, err)
			last := ""
			for i := 1; i <= turns; i++ {
				last = fmt.Sprintf("%s-t%d", session, i)
				ptid := "p-" + last
				_, err := e.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "ws", SessionID: session, ID: last,
					Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, ProviderTurnID: &ptid, ProviderTurnBinding: []byte(`{"t":1}`)})
				require.NoError(t, err)
				for m := 0; m < messages; m++ {
					_, err = e.AppendMessages(ctx, forkengine.MessageAppend{WorkspaceID: "ws", SessionID: session, TurnID: last,
						Messages: []forkengine.MessageInput{{Role: forkengine.RoleUser, Content: "said"}}})
					require.NoError(t, err)
				}
			}
			target := session + "-fork"
			op, err := e.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "ws", SourceSessionID: session, ThroughTurnID: last,
				RequestID: "r-" + target, TargetSessionID: target})
			require.NoError(t, err)
			n, counted := op.Snapshot.PrefixCount()
			require.True(t, counted, target)
			require.Equal(t, int64(messages*turns), n, target)
			before := db.Statements()
			op, err = e.ProcessOperation(ctx, "ws", op.ID)
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
			name := fmt.Sprintf("%d turns of %d messages", turns, messages)
			commits[name] = db.Statements() - before
			got, err := db.CountSessionMessages(ctx, "ws", []string{target})
			require.NoError(t, err)
			require.Equal(t, messages*turns, got[target], name)
		}
	}
	t.Logf("statements of the commit (dispatch included): %v", commits)
	want := commits["10 turns of 2 messages"]
	for name, n := range commits {
		require.Equal(t, want, n, "%s: the commit counts nothing again", name)
	}
}
