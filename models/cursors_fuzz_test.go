package models_test

import (
	"testing"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
)

// FuzzDecodeCursors feeds arbitrary strings to every cursor decoder: never a panic, and every
// refusal is BAD_USER_INPUT with reason invalid_cursor.
func FuzzDecodeCursors(f *testing.F) {
	for _, seed := range []string{"", "c2Vzc2lvbnwyMDI2LTAxLTAxVDAwOjAwOjAwWnxz", "ZXZlbnR8MA", "ZXZlbnR8LTE", "dHVybnwx",
		"!!!", "c2Vzc2lvbnw", "ZXZlbnR8OTk5OTk5OTk5OTk5OTk5OTk5OTk5"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, cursor string) {
		check := func(err error) {
			if err == nil {
				return
			}
			if forkengine.ErrorCode(err) != forkengine.CodeInvalid || forkengine.ErrorReason(err) != models.ReasonInvalidCursor {
				t.Fatalf("cursor %q: %v", cursor, err)
			}
		}
		_, err := models.DecodeSessionCursor(&cursor, models.SessionListScope("w", forkengine.SessionFilter{}))
		check(err)
		_, err = models.DecodeOperationCursor(&cursor, models.OperationListScope("w", forkengine.OperationFilter{}))
		check(err)
		_, err = models.DecodeTurnCursor(&cursor, models.TurnListScope("w", "s"))
		check(err)
		n, _, err := models.DecodeEventCursor(&cursor)
		check(err)
		if err == nil && n < 0 {
			t.Fatalf("cursor %q decoded to a negative position %d", cursor, n)
		}
	})
}

// FuzzCursorRoundTrip checks that every cursor the server hands out decodes to what it encoded.
func FuzzCursorRoundTrip(f *testing.F) {
	f.Add(int64(0), "s", int64(0))
	f.Add(int64(1767225600123456789), "a|b", int64(42))
	f.Add(int64(-62135596800000000), "ü", int64(1<<62))
	f.Fuzz(func(t *testing.T, nanos int64, id string, position int64) {
		at := time.Unix(0, nanos).UTC()
		if id == "" || forkengine.ValidateID("id", id) != nil {
			return
		}
		scope := models.SessionListScope("w", forkengine.SessionFilter{})
		c := models.SessionCursor(scope, forkengine.Session{CreatedAt: at, ID: id})
		got, err := models.DecodeSessionCursor(&c, scope)
		if err != nil || !got.Time.Equal(at) || got.ID != id {
			t.Fatalf("session cursor of (%v, %q) decoded to %+v, %v", at, id, got, err)
		}
		if position < 0 {
			position = -(position + 1)
		}
		e := models.EventCursor(position)
		n, ok, err := models.DecodeEventCursor(&e)
		if err != nil || !ok || n != position {
			t.Fatalf("event cursor %d decoded to %d, %v, %v", position, n, ok, err)
		}
	})
}
