package forkenginetest

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

var errRollback = errors.New("roll back, please")

// writeOneOfEverything writes a row to every table of workspace ws.
func writeOneOfEverything(ctx context.Context, tx forkengine.Tx, ws string) error {
	if err := tx.UpsertSession(ctx, newSession(ws, "s1")); err != nil {
		return err
	}
	if err := tx.UpsertTurn(ctx, newTurn(ws, "s1", "t1", 1)); err != nil {
		return err
	}
	if _, err := tx.InsertMessages(ctx, []forkengine.Message{newMessage(ws, "s1", "t1", "m1")}); err != nil {
		return err
	}
	if err := tx.InsertOperation(ctx, newOperation(ws, "op1", "s1", "t1", "x1", forkengine.StatusPrepared)); err != nil {
		return err
	}
	if err := tx.InsertLineage(ctx, newLineage(ws, "op1", "s1", "t1", "x1", at(0))); err != nil {
		return err
	}
	_, err := tx.AppendEvents(ctx, []forkengine.Event{newEvent(ws, forkengine.EventSessionUpserted, "s1")})
	return err
}

// requireNothingStored checks that no row of writeOneOfEverything is visible.
func requireNothingStored(t *testing.T, s forkengine.Reader, ws string) {
	t.Helper()
	ctx := context.Background()
	_, err := s.GetSession(ctx, ws, "s1")
	require.ErrorIs(t, err, forkengine.ErrNotFound)
	_, err = s.GetTurn(ctx, ws, "t1")
	require.ErrorIs(t, err, forkengine.ErrNotFound)
	msgs, err := s.MessagesByIDs(ctx, ws, []string{"m1"})
	require.NoError(t, err)
	require.Empty(t, msgs)
	_, err = s.GetOperation(ctx, ws, "op1")
	require.ErrorIs(t, err, forkengine.ErrNotFound)
	lineages, err := s.LineagesByTargetIDs(ctx, ws, []string{"x1"})
	require.NoError(t, err)
	require.Empty(t, lineages)
	events, err := s.EventsAfter(ctx, ws, 0, 0)
	require.NoError(t, err)
	require.Empty(t, events)
}

func transactionTests() map[string]storeTest {
	return map[string]storeTest{
		"ErrorRollsBackEveryWrite": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			err := s.Update(ctx, func(tx forkengine.Tx) error {
				if err := writeOneOfEverything(ctx, tx, wsA); err != nil {
					return err
				}
				return errRollback
			})
			require.ErrorIs(t, err, errRollback)
			requireNothingStored(t, s, wsA)
		},
		"PanicRollsBackAndRepanics": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			require.PanicsWithValue(t, "boom", func() {
				_ = s.Update(ctx, func(tx forkengine.Tx) error {
					if err := writeOneOfEverything(ctx, tx, wsA); err != nil {
						return err
					}
					panic("boom")
				})
			})
			requireNothingStored(t, s, wsA)
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return writeOneOfEverything(ctx, tx, wsA) })
		},
		"WritesAreVisibleInsideOnlyUntilCommit": func(t *testing.T, s forkengine.Store) {
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				if err := writeOneOfEverything(ctx, tx, wsA); err != nil {
					return err
				}
				_, err := tx.GetOperation(ctx, wsA, "op1")
				require.NoError(t, err, "a transaction reads its own writes")
				requireNothingStored(t, s, wsA)
				return nil
			})
			_, err := s.GetOperation(context.Background(), wsA, "op1")
			require.NoError(t, err)
		},
		"FailedWriteLeavesTransactionUsable": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				if err := writeOneOfEverything(ctx, tx, wsA); err != nil {
					return err
				}
				err := tx.InsertOperation(ctx, newOperation(wsA, "op2", "s1", "t1", "x2", forkengine.StatusPrepared))
				require.ErrorIs(t, err, forkengine.ErrDuplicate)
				held, err := tx.LatestOperationOnBoundary(ctx, wsA, "s1", "t1")
				require.NoError(t, err, "reads work after a rejected write")
				require.Equal(t, "op1", held.ID)
				return tx.UpsertSession(ctx, newSession(wsA, "s2"))
			})
			_, err := s.GetSession(ctx, wsA, "s2")
			require.NoError(t, err)
			_, err = s.GetOperation(ctx, wsA, "op1")
			require.NoError(t, err)
		},
		"CanceledContextWritesNothing": func(t *testing.T, s forkengine.Store) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			err := s.Update(ctx, func(tx forkengine.Tx) error { return writeOneOfEverything(ctx, tx, wsA) })
			require.ErrorIs(t, err, context.Canceled)
			requireNothingStored(t, s, wsA)
		},
		"ConcurrentUpdatesSerialiseWithoutLostUpdates": testConcurrentUpdates,
		"ReturnedValuesAreCopies":                      testCopies,
		"WorkspacesNeverMix":                           testWorkspaceIsolation,
	}
}

func testConcurrentUpdates(t *testing.T, s forkengine.Store) {
	ctx := context.Background()
	counter := newSession(wsA, "counter")
	counter.Title = "0"
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.UpsertSession(ctx, counter) })
	const writers = 20
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			errs <- s.Update(ctx, func(tx forkengine.Tx) error {
				// A read-modify-write names what it reads: stores whose writers run side by side
				// (PostgreSQL) serialise only transactions that lock a common key.
				if err := tx.Lock(ctx, "session/"+wsA+"/counter"); err != nil {
					return err
				}
				cur, err := tx.GetSession(ctx, wsA, "counter")
				if err != nil {
					return err
				}
				n, err := strconv.Atoi(cur.Title)
				if err != nil {
					return err
				}
				cur.Title = strconv.Itoa(n + 1)
				if err := tx.UpsertSession(ctx, cur); err != nil {
					return err
				}
				_, err = tx.AppendEvents(ctx, []forkengine.Event{newEvent(wsA, forkengine.EventSessionUpserted, "counter")})
				return err
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	got, err := s.GetSession(ctx, wsA, "counter")
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(writers), got.Title, "no update was lost")
	events, err := s.EventsAfter(ctx, wsA, 0, 0)
	require.NoError(t, err)
	require.Len(t, events, writers)
	for i := 1; i < len(events); i++ {
		require.Less(t, events[i-1].Cursor, events[i].Cursor)
	}
}

func testCopies(t *testing.T, s forkengine.Store) {
	ctx := context.Background()
	op := fullOperation(wsA, "op1")
	sess := newSession(wsA, "s1")
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		if err := tx.UpsertSession(ctx, sess); err != nil {
			return err
		}
		return tx.InsertOperation(ctx, op)
	})
	sess.Settings[1] = 'X' // the caller's bytes are not the stored ones
	got, err := s.GetSession(ctx, wsA, "s1")
	require.NoError(t, err)
	require.JSONEq(t, `{"a":1}`, string(got.Settings))
	got.Settings[1] = 'X'

	gotOp, err := s.GetOperation(ctx, wsA, "op1")
	require.NoError(t, err)
	gotOp.TargetTurnBindings[0].Binding[1] = 'X'
	gotOp.Snapshot.Turns[0].ID = "changed"
	gotOp.Snapshot.Session.Settings[1] = 'X'
	*gotOp.AcknowledgedAt = at(99)
	again, err := s.GetOperation(ctx, wsA, "op1")
	require.NoError(t, err)
	require.Equal(t, fullOperation(wsA, "op1"), again)
	gotAgain, err := s.GetSession(ctx, wsA, "s1")
	require.NoError(t, err)
	require.Equal(t, newSession(wsA, "s1"), gotAgain)
}
