package forkengine

import (
	"context"
	"fmt"
)

// Reason codes of a cursor the event log cannot resume from (with CodeInvalid).
const (
	ReasonInvalidCursor = "invalid_cursor"
	ReasonCursorExpired = "cursor_expired"
)

// CheckResumeCursor says whether the workspace's event log can replay everything after cursor:
// 0 (the start of the log) always can; otherwise the cursor must name an event of this
// workspace that the log still holds. Errors: BAD_USER_INPUT with reason cursor_expired (older
// than the oldest event kept: reload and subscribe afresh) or invalid_cursor (no such event in
// this workspace).
func (e *Engine) CheckResumeCursor(ctx context.Context, workspaceID string, cursor int64) error {
	if cursor == 0 {
		return nil
	}
	oldest, err := e.store.OldestEventCursor(ctx, workspaceID)
	if err != nil {
		return fmt.Errorf("oldest event of %s: %w", workspaceID, err)
	}
	if oldest > 0 && cursor < oldest {
		return ReasonErrorf(CodeInvalid, ReasonCursorExpired,
			"the cursor is older than the event log kept; reload the workspace and subscribe without after")
	}
	named, err := e.store.EventsAfter(ctx, workspaceID, cursor-1, 1)
	if err != nil {
		return fmt.Errorf("check event cursor of %s: %w", workspaceID, err)
	}
	if len(named) == 0 || named[0].Cursor != cursor {
		return ReasonErrorf(CodeInvalid, ReasonInvalidCursor, "the cursor names no event of workspace %s", workspaceID)
	}
	return nil
}
