package store

import (
	"context"

	"gorm.io/gorm"

	"github.com/forkgraph/forkgraph/forkengine"
)

// workspaceSettingsTable keeps what an operator set per workspace: the kill switch of new forks
// (migration 18). A workspace without a row has the defaults.
const workspaceSettingsTable = `CREATE TABLE workspace_settings (
	workspace_id     TEXT    NOT NULL PRIMARY KEY,
	forking_disabled BOOLEAN NOT NULL,
	updated_at_us    BIGINT  NOT NULL
)`

const upsertWorkspaceSettingsSQL = `INSERT INTO workspace_settings (workspace_id, forking_disabled, updated_at_us) VALUES (?, ?, ?)
	ON CONFLICT (workspace_id) DO UPDATE SET forking_disabled = excluded.forking_disabled, updated_at_us = excluded.updated_at_us`

// WorkspaceSettingsByIDs returns the stored settings among workspaceIDs: one statement per chunk.
func (q queries) WorkspaceSettingsByIDs(ctx context.Context, workspaceIDs []string) (map[string]forkengine.WorkspaceSettings, error) {
	out := make(map[string]forkengine.WorkspaceSettings, len(workspaceIDs))
	err := q.inChunks(workspaceIDs, func(chunk []string) error {
		in, args := q.inList(chunk)
		var s forkengine.WorkspaceSettings
		var updatedUs int64
		err := scanEach(ctx, q, "SELECT workspace_id, forking_disabled, updated_at_us FROM workspace_settings WHERE workspace_id IN "+in,
			args, []any{&s.WorkspaceID, &s.ForkingDisabled, &updatedUs}, func() {
				s.UpdatedAt = fromMicros(updatedUs)
				out[s.WorkspaceID] = s
			})
		return classify(err, "workspace settings")
	})
	return out, err
}

// UpsertWorkspaceSettings stores a workspace's settings, replacing what it had.
func (tx *txn) UpsertWorkspaceSettings(ctx context.Context, s forkengine.WorkspaceSettings) error {
	return tx.guarded(ctx, func(db *gorm.DB) error {
		_, err := tx.execFixed(db, upsertWorkspaceSettingsSQL, s.WorkspaceID, s.ForkingDisabled, micros(s.UpdatedAt))
		return classify(err, "upsert settings of workspace %s", s.WorkspaceID)
	})
}
