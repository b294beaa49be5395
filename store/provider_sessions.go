package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/forkgraph/forkgraph/forkengine"
)

// claimProviderSessionSQL inserts the claim or, when the provider session is owned already,
// rewrites nothing of its row, and in both cases returns the owner in one statement. DO UPDATE,
// not DO NOTHING, because only an updated row is RETURNed: a claim that loses to a concurrent
// one waits for it to commit and then reads its workspace, under READ COMMITTED too.
var claimProviderSessionSQL = providerSessionsTable.insertOneSQL() + providerSessionsTable.onConflictKeep("workspace_id") +
	" RETURNING workspace_id"

// ClaimProviderSession makes c.WorkspaceID the owner of the provider session unless a workspace
// already is, and returns the owner.
func (tx *txn) ClaimProviderSession(ctx context.Context, c forkengine.ProviderSessionClaim) (string, error) {
	tx.statements.Add(1)
	var owner string
	err := tx.db.Statement.ConnPool.QueryRowContext(ctx, tx.dialect.placeholders(claimProviderSessionSQL),
		providerSessionsTable.values(&c)...).Scan(&owner)
	if err != nil {
		return "", classify(err, "claim provider session %s of %s", c.ProviderSessionID, c.Provider)
	}
	return owner, nil
}

// ProviderSessionOwner returns the workspace that owns the provider session, or ErrNotFound.
func (q queries) ProviderSessionOwner(ctx context.Context, provider, providerSessionID string) (string, error) {
	q.statements.Add(1)
	var owner string
	err := q.db.Statement.ConnPool.QueryRowContext(ctx,
		q.dialect.placeholders(`SELECT workspace_id FROM provider_sessions WHERE provider = ? AND provider_session_id = ?`),
		provider, providerSessionID).Scan(&owner)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", fmt.Errorf("provider session %s of %s: %w", providerSessionID, provider, forkengine.ErrNotFound)
	case err != nil:
		return "", fmt.Errorf("read the owner of provider session %s of %s: %w", providerSessionID, provider, err)
	}
	return owner, nil
}

// providerSessionsDDL is the owner of every provider session claimed (migration 14).
const providerSessionsDDL = `CREATE TABLE provider_sessions (
	provider            TEXT   NOT NULL,
	provider_session_id TEXT   NOT NULL,
	workspace_id        TEXT   NOT NULL,
	claimed_at_us       BIGINT NOT NULL,
	PRIMARY KEY (provider, provider_session_id)
)`

// providerSessionsBackfill gives every provider session already in sessions its owner: the
// workspace of the earliest session (by creation, then workspace and id) that names it. A
// database from before ownership may hold one provider session in several workspaces; the
// others keep their sessions, readable and reportable, but cannot fork through that id
// (forkengine: provider_session_owned).
var providerSessionsBackfill = providerSessionsTable.insertInto() + `
	SELECT provider, provider_session_id, workspace_id, created_at_us FROM (
		SELECT provider, provider_session_id, workspace_id, created_at_us,
			ROW_NUMBER() OVER (PARTITION BY provider, provider_session_id ORDER BY created_at_us, workspace_id, id) AS nth
		FROM sessions WHERE provider_session_id <> ''
	) AS ranked WHERE nth = 1`
