package forkengine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

func TestCheckResumeCursor(t *testing.T) {
	t.Parallel()
	store := forkenginetest.NewMemStore()
	engine, err := forkengine.New(forkengine.Config{Store: store})
	require.NoError(t, err)
	ctx := t.Context()
	report := func(ws, id string) {
		_, err := engine.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: ws, ID: id, Provider: "simulated"})
		require.NoError(t, err)
	}
	report("a", "a1") // cursor 1, workspace a
	report("b", "b1") // cursor 2, workspace b
	report("b", "b2") // cursor 3

	tests := []struct {
		name   string
		ws     string
		cursor int64
		reason string // "" means resumable
	}{
		{"OKStartOfLog", "b", 0, ""},
		{"OKEventOfTheWorkspace", "b", 2, ""},
		{"OKNewestEvent", "b", 3, ""},
		{"ErrCursorExpired", "b", 1, forkengine.ReasonCursorExpired}, // below b's oldest event
		{"ErrInvalidCursorBeyondTheLog", "b", 99, forkengine.ReasonInvalidCursor},
		{"ErrInvalidCursorOfAnotherWorkspace", "a", 3, forkengine.ReasonInvalidCursor},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := engine.CheckResumeCursor(ctx, tc.ws, tc.cursor)
			if tc.reason == "" {
				require.NoError(t, err)
				return
			}
			require.Equal(t, forkengine.CodeInvalid, forkengine.ErrorCode(err))
			require.Equal(t, tc.reason, forkengine.ErrorReason(err))
		})
	}
}
