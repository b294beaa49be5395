package forkenginetest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

func sessionTests() map[string]storeTest {
	return map[string]storeTest{
		"UpsertInsertsThenReplacesEveryField": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			first := newSession(wsA, "s1")
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.UpsertSession(ctx, first) })
			got, err := s.GetSession(ctx, wsA, "s1")
			require.NoError(t, err)
			require.Equal(t, first, got)

			second := forkengine.Session{
				WorkspaceID: wsA, ID: "s1", Kind: forkengine.SessionChild, Provider: "other",
				ProviderSessionID: "p2", Title: "t2", RailSectionKey: "r2", Cwd: "/c2", Model: "m2",
				Settings: json.RawMessage(`{"b":[1,2]}`), Metadata: json.RawMessage(`{"m":1}`),
				RailProjectPath: "/projects/p2", RuntimeContext: json.RawMessage(`{"worktree":"/w2"}`), Visible: false,
				CreatedAt: at(5), UpdatedAt: at(6), DeletedAt: timePtr(at(7)),
			}
			// Every field but Visible (false, to see it replaced) is set: a field the store
			// does not write would read back as its zero value.
			fields := reflect.ValueOf(second)
			for i := range fields.NumField() {
				if name := fields.Type().Field(i).Name; name != "Visible" {
					require.False(t, fields.Field(i).IsZero(), "the test sets Session.%s", name)
				}
			}
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.UpsertSession(ctx, second) })
			got, err = s.GetSession(ctx, wsA, "s1")
			require.NoError(t, err)
			require.Equal(t, second, got)
		},
		"EmptySettingsAreStoredAsEmptyObject": func(t *testing.T, s forkengine.Store) {
			sess := newSession(wsA, "s1")
			sess.Settings = nil
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.UpsertSession(ctx, sess) })
			got, err := s.GetSession(context.Background(), wsA, "s1")
			require.NoError(t, err)
			require.JSONEq(t, `{}`, string(got.Settings))
		},
		"GetMissingIsErrNotFound": func(t *testing.T, s forkengine.Store) {
			_, err := s.GetSession(context.Background(), wsA, "nope")
			require.ErrorIs(t, err, forkengine.ErrNotFound)
		},
		"SessionsByIDsOmitsMissingAndOtherWorkspaces": func(t *testing.T, s forkengine.Store) {
			seedSessionWithTurns(t, s, wsA, "s1", 0)
			seedSessionWithTurns(t, s, wsA, "s2", 0)
			seedSessionWithTurns(t, s, wsB, "s3", 0)
			got, err := s.SessionsByIDs(context.Background(), wsA, []string{"s1", "s2", "s3", "nope"})
			require.NoError(t, err)
			require.Len(t, got, 2)
			require.Equal(t, newSession(wsA, "s2"), got["s2"])
		},
		"ListPagesByCreatedAtThenID": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			seedPagedSessions(t, s)
			var seen []string
			for _, page := range pages(t, 2, func(after forkengine.PageCursor, n int) ([]forkengine.Session, error) {
				return s.ListSessions(ctx, wsA, forkengine.SessionFilter{}, after, n)
			}, sessionCursor) {
				seen = append(seen, ids(page, sessionID)...)
			}
			require.Equal(t, []string{"b", "c", "d", "a", "e"}, seen)
			all, err := s.ListSessions(ctx, wsA, forkengine.SessionFilter{}, forkengine.PageCursor{}, 0)
			require.NoError(t, err)
			require.Equal(t, seen, ids(all, sessionID), "limit <= 0 returns every row")
		},
		"ListAndCountApplyFilters": testSessionFilters,
		"SoftDeleteStampsDeletedAtAndKeepsTheRest": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			turns := seedSessionWithTurns(t, s, wsA, "s1", 1)
			insertOperations(t, s, newOperation(wsA, "op1", "s1", turns[0].ID, "s2", forkengine.StatusCommitted))
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				return tx.SoftDeleteSession(ctx, wsA, "s1", at(30))
			})
			got, err := s.GetSession(ctx, wsA, "s1")
			require.NoError(t, err)
			require.True(t, got.Deleted())
			require.Equal(t, at(30), *got.DeletedAt)
			want := newSession(wsA, "s1")
			want.DeletedAt = timePtr(at(30))
			require.Equal(t, want, got)
			batch, err := s.SessionsByIDs(ctx, wsA, []string{"s1"})
			require.NoError(t, err)
			require.Equal(t, want, batch["s1"], "batch reads include deleted sessions too")
			_, err = s.GetTurn(ctx, wsA, turns[0].ID)
			require.NoError(t, err, "turns survive a soft delete")
			_, err = s.GetOperation(ctx, wsA, "op1")
			require.NoError(t, err, "operations survive a soft delete")
		},
		"SoftDeleteMissingIsErrNotFound": func(t *testing.T, s forkengine.Store) {
			err := s.Update(context.Background(), func(tx forkengine.Tx) error {
				return tx.SoftDeleteSession(context.Background(), wsA, "nope", at(1))
			})
			require.ErrorIs(t, err, forkengine.ErrNotFound)
		},
	}
}

func testSessionFilters(t *testing.T, s forkengine.Store) {
	ctx := context.Background()
	hidden, child, deleted, forked := newSession(wsA, "hidden"), newSession(wsA, "child"), newSession(wsA, "deleted"), newSession(wsA, "forked")
	hidden.Visible = false
	child.Kind = forkengine.SessionChild
	child.Provider = "webhook"
	deleted.DeletedAt = timePtr(at(9))
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		for _, sess := range []forkengine.Session{newSession(wsA, "plain"), hidden, child, deleted, forked, newSession(wsB, "other")} {
			if err := tx.UpsertSession(ctx, sess); err != nil {
				return err
			}
		}
		return tx.InsertLineage(ctx, newLineage(wsA, "op1", "plain", "t1", "forked", at(3)))
	})
	yes, no := true, false
	cases := []struct {
		filter forkengine.SessionFilter
		want   []string
	}{
		{forkengine.SessionFilter{}, []string{"child", "forked", "hidden", "plain"}},
		{forkengine.SessionFilter{IncludeDeleted: true}, []string{"child", "deleted", "forked", "hidden", "plain"}},
		{forkengine.SessionFilter{Kind: forkengine.SessionChild}, []string{"child"}},
		{forkengine.SessionFilter{Kind: forkengine.SessionRoot}, []string{"forked", "hidden", "plain"}},
		{forkengine.SessionFilter{Provider: "webhook"}, []string{"child"}},
		{forkengine.SessionFilter{Visible: &no}, []string{"hidden"}},
		{forkengine.SessionFilter{Visible: &yes}, []string{"child", "forked", "plain"}},
		{forkengine.SessionFilter{RootsOnly: true}, []string{"child", "hidden", "plain"}},
		{forkengine.SessionFilter{RootsOnly: true, Kind: forkengine.SessionRoot, Visible: &yes}, []string{"plain"}},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%+v", c.filter)
		got, err := s.ListSessions(ctx, wsA, c.filter, forkengine.PageCursor{}, 0)
		require.NoError(t, err, name)
		require.Equal(t, c.want, ids(got, sessionID), name)
		n, err := s.CountSessions(ctx, wsA, c.filter)
		require.NoError(t, err, name)
		require.Equal(t, len(c.want), n, name)
	}
}

// seedPagedSessions writes the five sessions the paging tests read: ascending (CreatedAt, ID)
// they are b, c, d, a, e, since three share a minute and the id breaks the tie.
func seedPagedSessions(t *testing.T, s forkengine.Store) {
	t.Helper()
	created := map[string]int{"e": 3, "b": 1, "d": 1, "c": 1, "a": 2}
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		for id, minute := range created {
			sess := newSession(wsA, id)
			sess.CreatedAt = at(minute)
			if err := tx.UpsertSession(ctx, sess); err != nil {
				return err
			}
		}
		return nil
	})
}
