package forkenginetest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// RunStoreTests is the contract every forkengine.Store implementation must pass. newStore returns
// a fresh, empty store for each subtest; the caller owns closing it (t.Cleanup).
func RunStoreTests(t *testing.T, newStore func(t *testing.T) forkengine.Store) {
	groups := []struct {
		name  string
		tests map[string]storeTest
	}{
		{"Sessions", sessionTests()},
		{"SessionCounts", sessionCountTests()},
		{"Turns", turnTests()},
		{"TurnCounts", turnCountTests()},
		{"Messages", messageTests()},
		{"Operations", operationTests()},
		{"OperationQueries", operationQueryTests()},
		{"Lineages", lineageTests()},
		{"FamilyCounts", familyCountTests()},
		{"Events", eventTests()},
		{"Purge", purgeTests()},
		{"Transactions", transactionTests()},
		{"Leases", leaseTests()},
		{"Log", logTests()},
		{"Encoding", encodingTests()},
		{"Isolation", isolationTests()},
		{"HostileText", hostileTextTests()},
		{"ProviderAnswers", providerAnswerTests()},
		{"ProviderSessions", providerSessionTests()},
		{"BackwardPages", backwardTests()},
		{"History", historyTests()},
		{"Submissions", submissionTests()},
		{"Bindings", bindingTests()},
		{"Recovery", recoveryTests()},
		{"Resume", resumeTests()},
		{"KillSwitch", killSwitchTests()},
		{"Search", searchTests()},
		{"Pages", pageTests()},
		{"Target", targetTests()},
		{"RichMessages", richMessageTests()},
		{"Metadata", metadataTests()},
		{"Interactions", interactionTests()},
		{"InteractionsFailClosed", interactionsFailClosedTests()},
		{"AuditMessages", auditTests()},
		{"RemapClosed", remapClosedTests()},
		{"Prefix", prefixTests()},
		{"BoundaryScenarios", boundaryScenarioTests()},
		{"RuntimeContext", runtimeContextTests()},
	}
	// Every subtest has a store of its own, so they all run in parallel (River's driver suite is
	// the model): the suite takes as long as its slowest test, not the sum of them.
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, name := range slices.Sorted(maps.Keys(g.tests)) {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					g.tests[name](t, newStore(t))
				})
			}
		})
	}
}

// pages reads a keyset list page by page, up to 10 pages of at most size rows: read returns the
// page after (or before) a cursor, next is the cursor a page's last row continues from. It
// fails the test on a read error or a page longer than size.
func pages[T any](t *testing.T, size int, read func(cursor forkengine.PageCursor, size int) ([]T, error), next func(T) forkengine.PageCursor) [][]T {
	t.Helper()
	var out [][]T
	var cursor forkengine.PageCursor
	for range 10 {
		page, err := read(cursor, size)
		require.NoError(t, err)
		require.LessOrEqual(t, len(page), size)
		if len(page) == 0 {
			break
		}
		out = append(out, page)
		cursor = next(page[len(page)-1])
	}
	return out
}

// sessionCursor and operationCursor are the keyset positions of a listed row.
func sessionCursor(s forkengine.Session) forkengine.PageCursor {
	return forkengine.PageCursor{Time: s.CreatedAt, ID: s.ID}
}

func operationCursor(o forkengine.ForkOperation) forkengine.PageCursor {
	return forkengine.PageCursor{Time: o.CreatedAt, ID: o.ID}
}

// storeTest is one contract test against a fresh store.
type storeTest func(t *testing.T, s forkengine.Store)

const (
	wsA = "ws-a"
	wsB = "ws-b"
)

// baseTime is UTC at microsecond precision, so values written round-trip unchanged.
var baseTime = time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)

func at(minutes int) time.Time { return baseTime.Add(time.Duration(minutes) * time.Minute) }

func timePtr(t time.Time) *time.Time { return &t }

func newSession(ws, id string) forkengine.Session {
	return forkengine.Session{
		WorkspaceID: ws, ID: id, Kind: forkengine.SessionRoot, Provider: "simulated",
		ProviderSessionID: "p-" + id, Title: "title " + id, RailSectionKey: "rail", Cwd: "/work",
		Model: "model-1", Settings: json.RawMessage(`{"a":1}`), Visible: true,
		CreatedAt: at(0), UpdatedAt: at(1),
	}
}

func newTurn(ws, sessionID, id string, seq int64) forkengine.Turn {
	return forkengine.Turn{
		WorkspaceID: ws, SessionID: sessionID, ID: id, Sequence: seq,
		Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, Origin: "user",
		StartedAt: at(int(seq)), SettledAt: timePtr(at(int(seq) + 1)), UpdatedAt: at(int(seq) + 1),
		ProviderTurnID: "pt-" + id, ProviderTurnBinding: json.RawMessage(`{"turn":"` + id + `"}`),
	}
}

func newMessage(ws, sessionID, turnID, id string) forkengine.Message {
	return forkengine.Message{
		WorkspaceID: ws, SessionID: sessionID, TurnID: turnID, ID: id,
		Role: forkengine.RoleUser, Content: "content " + id, CreatedAt: at(2),
	}
}

func newOperation(ws, id, source, through, target string, status forkengine.OperationStatus) forkengine.ForkOperation {
	return forkengine.ForkOperation{
		WorkspaceID: ws, ID: id, RequestID: "req-" + id, RequestHash: "hash-" + id,
		SourceSessionID: source, TargetSessionID: target, ThroughTurnID: through,
		SourceProviderSessionID: "p-" + source, SourceProviderTurnID: "pt-" + through,
		SourceProviderTurnBinding: json.RawMessage(`{"b":true}`),
		Provider:                  "simulated", DriverKind: "sim", DriverVersion: "1", Status: status,
		TargetTitle: "fork of " + source, StateBindingMode: forkengine.BindingHostCopy,
		CreatedAt: at(10), UpdatedAt: at(10),
	}
}

func newLineage(ws, operationID, source, sourceTurn, target string, forkedAt time.Time) forkengine.Lineage {
	return forkengine.Lineage{
		WorkspaceID: ws, OperationID: operationID, SourceSessionID: source, SourceTurnID: sourceTurn,
		TargetSessionID: target, TargetTurnID: target + "-" + sourceTurn, ForkedAt: forkedAt,
	}
}

// update runs fn in one transaction and fails the test on error.
func update(t *testing.T, s forkengine.Store, fn func(ctx context.Context, tx forkengine.Tx) error) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.Update(ctx, func(tx forkengine.Tx) error { return fn(ctx, tx) }))
}

// seedSessionWithTurns stores a session with turns of sequences 1..n, ids "<id>-t<seq>".
func seedSessionWithTurns(t *testing.T, s forkengine.Store, ws, id string, n int) []forkengine.Turn {
	t.Helper()
	turns := make([]forkengine.Turn, n)
	for i := range turns {
		turns[i] = newTurn(ws, id, fmt.Sprintf("%s-t%d", id, i+1), int64(i+1))
	}
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		if err := tx.UpsertSession(ctx, newSession(ws, id)); err != nil {
			return err
		}
		for _, turn := range turns {
			if err := tx.UpsertTurn(ctx, turn); err != nil {
				return err
			}
		}
		return nil
	})
	return turns
}

func insertOperations(t *testing.T, s forkengine.Store, ops ...forkengine.ForkOperation) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		for _, op := range ops {
			if err := tx.InsertOperation(ctx, op); err != nil {
				return err
			}
		}
		return nil
	})
}

// requireDuplicate asserts that fn, run in its own transaction, fails with ErrDuplicate.
func requireDuplicate(t *testing.T, s forkengine.Store, fn func(ctx context.Context, tx forkengine.Tx) error) {
	t.Helper()
	ctx := context.Background()
	err := s.Update(ctx, func(tx forkengine.Tx) error { return fn(ctx, tx) })
	require.ErrorIs(t, err, forkengine.ErrDuplicate)
}

func ids[T any](rows []T, id func(T) string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = id(r)
	}
	return out
}

func sessionID(s forkengine.Session) string         { return s.ID }
func turnID(t forkengine.Turn) string               { return t.ID }
func messageID(m forkengine.Message) string         { return m.ID }
func operationID(o forkengine.ForkOperation) string { return o.ID }
