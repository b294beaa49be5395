package store

import (
	"context"

	"gorm.io/gorm"

	"github.com/forkgraph/forkgraph/forkengine"
)

// workspaceSettingsDDL keeps what an operator set per workspace: the kill switch of new forks
// (migration 18). A workspace without a row has the defaults.
const workspaceSettingsDDL = `CREATE TABLE workspace_settings (
	workspace_id     TEXT    NOT NULL PRIMARY KEY,
	forking_disabled BOOLEAN NOT NULL,
	updated_at_us    BIGINT  NOT NULL
)`

var (
	upsertWorkspaceSettingsSQL = workspaceSettingsTable.upsertSQL()
	selectWorkspaceSettingsSQL = workspaceSettingsTable.selectSQL() + " WHERE workspace_id IN "
)

// WorkspaceSettingsByIDs returns the stored settings among workspaceIDs: one statement per chunk.
func (q queries) WorkspaceSettingsByIDs(ctx context.Context, workspaceIDs []string) (map[string]forkengine.WorkspaceSettings, error) {
	out := make(map[string]forkengine.WorkspaceSettings, len(workspaceIDs))
	err := q.inChunks(workspaceIDs, func(chunk []string) error {
		in, args := q.inList(chunk)
		var s forkengine.WorkspaceSettings
		err := scanEach(ctx, q, selectWorkspaceSettingsSQL+in,
			args, workspaceSettingsTable.targets(&s), func() { out[s.WorkspaceID] = s })
		return classify(err, "workspace settings")
	})
	return out, err
}

// UpsertWorkspaceSettings stores a workspace's settings, replacing what it had.
func (tx *txn) UpsertWorkspaceSettings(ctx context.Context, s forkengine.WorkspaceSettings) error {
	return tx.guarded(ctx, func(db *gorm.DB) error {
		_, err := tx.execFixed(db, upsertWorkspaceSettingsSQL, workspaceSettingsTable.values(&s)...)
		return classify(err, "upsert settings of workspace %s", s.WorkspaceID)
	})
}
