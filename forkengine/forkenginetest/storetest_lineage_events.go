package forkenginetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

func lineageTests() map[string]storeTest {
	return map[string]storeTest{
		"LookupsByTargetAndSource": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			l1 := newLineage(wsA, "op1", "src", "t1", "c", at(2))
			l2 := newLineage(wsA, "op2", "src", "t2", "b", at(1))
			l3 := newLineage(wsA, "op3", "src", "t1", "a", at(2))
			l4 := newLineage(wsA, "op4", "other", "t1", "d", at(0))
			l5 := newLineage(wsB, "op1", "src", "t1", "c", at(0))
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				for _, l := range []forkengine.Lineage{l1, l2, l3, l4, l5} {
					if err := tx.InsertLineage(ctx, l); err != nil {
						return err
					}
				}
				return nil
			})
			byTarget, err := s.LineagesByTargetIDs(ctx, wsA, []string{"c", "d", "nope"})
			require.NoError(t, err)
			require.Equal(t, map[string]forkengine.Lineage{"c": l1, "d": l4}, byTarget)
			bySource, err := s.LineagesBySourceIDs(ctx, wsA, []string{"src", "nope"})
			require.NoError(t, err)
			require.Equal(t, map[string][]forkengine.Lineage{"src": {l2, l3, l1}}, bySource, "ordered by (ForkedAt, TargetSessionID)")
		},
		"CountFamilyForksWalksTheWholeFamily": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			// root → a → b (a fork of a fork), root → c; "x" is another family, wsB another workspace.
			insertOperations(t, s,
				newOperation(wsA, "to-a", "root", "t1", "a", forkengine.StatusCommitted),
				newOperation(wsA, "to-b", "a", "t1", "b", forkengine.StatusCommitted),
				newOperation(wsA, "to-c", "root", "t2", "c", forkengine.StatusCommitted),
				newOperation(wsA, "failed", "root", "t3", "f1", forkengine.StatusFailed),
				newOperation(wsA, "prepared", "root", "t4", "p1", forkengine.StatusPrepared),
				newOperation(wsA, "dispatching", "b", "t1", "p2", forkengine.StatusDispatching),
				newOperation(wsA, "accepted", "c", "t1", "p3", forkengine.StatusProviderAccepted),
				newOperation(wsA, "unknown", "a", "t2", "p4", forkengine.StatusUnknown),
				newOperation(wsA, "elsewhere", "x", "t1", "p5", forkengine.StatusPrepared),
				newOperation(wsB, "other-ws", "root", "t1", "p6", forkengine.StatusPrepared),
			)
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				for _, l := range []forkengine.Lineage{
					newLineage(wsA, "to-a", "root", "t1", "a", at(1)), newLineage(wsA, "to-b", "a", "t1", "b", at(2)),
					newLineage(wsA, "to-c", "root", "t2", "c", at(3)), newLineage(wsA, "to-y", "x", "t1", "y", at(4)),
					newLineage(wsB, "to-a", "root", "t1", "a", at(1)),
				} {
					if err := tx.InsertLineage(ctx, l); err != nil {
						return err
					}
				}
				return nil
			})
			n, err := s.CountFamilyForks(ctx, wsA, "root")
			require.NoError(t, err)
			require.Equal(t, 3+4, n, "three committed members and four unfinished operations; failed ones do not count")
			n, err = s.CountFamilyForks(ctx, wsA, "a")
			require.NoError(t, err)
			require.Equal(t, 1+2, n, "a sub-family counts from its own root")
			n, err = s.CountFamilyForks(ctx, wsA, "lonely")
			require.NoError(t, err)
			require.Zero(t, n)
		},
		"OneLineagePerTargetAndPerOperation": func(t *testing.T, s forkengine.Store) {
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				return tx.InsertLineage(ctx, newLineage(wsA, "op1", "src", "t1", "c", at(0)))
			})
			requireDuplicate(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				return tx.InsertLineage(ctx, newLineage(wsA, "op2", "src", "t2", "c", at(0)))
			})
			requireDuplicate(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				return tx.InsertLineage(ctx, newLineage(wsA, "op1", "src", "t2", "other", at(0)))
			})
		},
	}
}

func newEvent(ws string, kind forkengine.EventKind, session string) forkengine.Event {
	return forkengine.Event{WorkspaceID: ws, Kind: kind, SessionID: session, OccurredAt: at(1)}
}

func eventTests() map[string]storeTest {
	return map[string]storeTest{
		"AppendAssignsIncreasingCursorsAcrossWorkspaces": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			full := forkengine.Event{
				WorkspaceID: wsA, Kind: forkengine.EventForkOperationUpdated, SessionID: "s1", TurnID: "t1",
				OperationID: "op1", Status: forkengine.StatusDispatching, OccurredAt: at(3),
			}
			var first, second []forkengine.Event
			update(t, s, func(ctx context.Context, tx forkengine.Tx) (err error) {
				first, err = tx.AppendEvents(ctx, []forkengine.Event{full, newEvent(wsB, forkengine.EventSessionUpserted, "s1")})
				return err
			})
			update(t, s, func(ctx context.Context, tx forkengine.Tx) (err error) {
				second, err = tx.AppendEvents(ctx, []forkengine.Event{
					newEvent(wsA, forkengine.EventTurnUpserted, "s1"), newEvent(wsA, forkengine.EventSessionDeleted, "s1"),
				})
				return err
			})
			require.Positive(t, first[0].Cursor)
			require.Less(t, first[0].Cursor, first[1].Cursor)
			require.Less(t, first[1].Cursor, second[0].Cursor)
			require.Less(t, second[0].Cursor, second[1].Cursor)
			full.Cursor = first[0].Cursor
			require.Equal(t, full, first[0])

			all, err := s.EventsAfter(ctx, wsA, 0, 0)
			require.NoError(t, err)
			require.Equal(t, []forkengine.Event{first[0], second[0], second[1]}, all)
			page, err := s.EventsAfter(ctx, wsA, first[0].Cursor, 1)
			require.NoError(t, err)
			require.Equal(t, []forkengine.Event{second[0]}, page)
			rest, err := s.EventsAfter(ctx, wsA, second[0].Cursor, 10)
			require.NoError(t, err)
			require.Equal(t, []forkengine.Event{second[1]}, rest)
			none, err := s.EventsAfter(ctx, wsA, second[1].Cursor, 10)
			require.NoError(t, err)
			require.Empty(t, none)
		},
		"OldestCursorIsZeroForAnEmptyLog": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			oldest, err := s.OldestEventCursor(ctx, wsA)
			require.NoError(t, err)
			require.Zero(t, oldest)
			var appended []forkengine.Event
			update(t, s, func(ctx context.Context, tx forkengine.Tx) (err error) {
				appended, err = tx.AppendEvents(ctx, []forkengine.Event{
					newEvent(wsB, forkengine.EventSessionUpserted, "s1"),
					newEvent(wsA, forkengine.EventSessionUpserted, "s1"),
					newEvent(wsA, forkengine.EventSessionUpserted, "s2"),
				})
				return err
			})
			oldest, err = s.OldestEventCursor(ctx, wsA)
			require.NoError(t, err)
			require.Equal(t, appended[1].Cursor, oldest)
		},
		"LatestCursorIsTheWorkspacesHighest": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			latest, err := s.LatestEventCursor(ctx, wsA)
			require.NoError(t, err)
			require.Zero(t, latest)
			var appended []forkengine.Event
			update(t, s, func(ctx context.Context, tx forkengine.Tx) (err error) {
				appended, err = tx.AppendEvents(ctx, []forkengine.Event{
					newEvent(wsA, forkengine.EventSessionUpserted, "s1"),
					newEvent(wsA, forkengine.EventSessionUpserted, "s2"),
					newEvent(wsB, forkengine.EventSessionUpserted, "s1"),
				})
				return err
			})
			latest, err = s.LatestEventCursor(ctx, wsA)
			require.NoError(t, err)
			require.Equal(t, appended[1].Cursor, latest, "another workspace's later event does not count")
			latest, err = s.LatestEventCursor(ctx, wsB)
			require.NoError(t, err)
			require.Equal(t, appended[2].Cursor, latest)
		},
		"RolledBackEventsAreNeverSeen": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			err := s.Update(ctx, func(tx forkengine.Tx) error {
				if _, err := tx.AppendEvents(ctx, []forkengine.Event{newEvent(wsA, forkengine.EventSessionUpserted, "s1")}); err != nil {
					return err
				}
				return errRollback
			})
			require.ErrorIs(t, err, errRollback)
			var kept []forkengine.Event
			update(t, s, func(ctx context.Context, tx forkengine.Tx) (err error) {
				kept, err = tx.AppendEvents(ctx, []forkengine.Event{newEvent(wsA, forkengine.EventSessionUpserted, "s2")})
				return err
			})
			all, err := s.EventsAfter(ctx, wsA, 0, 0)
			require.NoError(t, err)
			require.Equal(t, kept, all)
		},
	}
}
