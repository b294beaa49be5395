package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/forkgraph/forkgraph/forkengine"
)

// A fork's title counts the operations that did not fail whose source lies in the family of its
// source's root (reference §6.3). Counting them per title walked the whole family, so it grew
// with the family; fork_families keeps that number per root instead, changed in the same
// transaction as whatever changes it: an insert adds one, a move to or from failed adds -1 or 1,
// a lineage that hangs a counted subtree under another family moves the subtree's count, and a
// purge (which removes operations and splits families) recounts the families it touches.
//
// A root is the session a walk up the lineages ends at: the first one that is no lineage's
// target (rootOf). A corrupt cycle has no root, so its operations are counted nowhere.

// addFamilyForksSQL adds a delta to a root's count.
var addFamilyForksSQL = forkFamiliesTable.insertOneSQL() + forkFamiliesTable.onConflictAdd("forks")

// rootCountSQL answers -1 when the session is not a root (so has no counter), else its family's
// count, in one statement of two primary-key probes.
const rootCountSQL = `SELECT CASE
	WHEN EXISTS (SELECT 1 FROM lineages WHERE workspace_id = ? AND target_session_id = ?) THEN -1
	ELSE COALESCE((SELECT forks FROM fork_families WHERE workspace_id = ? AND root_session_id = ?), 0) END`

// recountFamilySQL sets a root's count from the rows themselves: the non-failed operations whose
// source is the root or a session below it.
var recountFamilySQL = `WITH RECURSIVE family (id) AS (
		SELECT CAST(? AS TEXT)
		UNION
		SELECT l.target_session_id FROM family f CROSS JOIN lineages l
		WHERE l.workspace_id = ? AND l.source_session_id = f.id
	)
	` + forkFamiliesTable.insertInto() + `
	SELECT CAST(? AS TEXT), CAST(? AS TEXT), COUNT(*) FROM fork_operations o
	WHERE o.workspace_id = ? AND o.status <> 'failed' AND o.source_session_id IN (SELECT id FROM family)
	` + forkFamiliesTable.onConflictSet("forks")

const familyCountOfSQL = `SELECT COALESCE((SELECT forks FROM fork_families
	WHERE workspace_id = ? AND root_session_id = ?), 0)`

const dropFamilySQL = `DELETE FROM fork_families WHERE workspace_id = ? AND root_session_id = ?`

// counted is 1 for a status that counts in a title, 0 for failed.
func counted(s forkengine.OperationStatus) int64 {
	if s == forkengine.StatusFailed {
		return 0
	}
	return 1
}

// addFamilyForks adds delta to the count of the family source belongs to.
func (tx *txn) addFamilyForks(ctx context.Context, ws, source string, delta int64) error {
	if delta == 0 {
		return nil
	}
	root, found, err := tx.rootOf(ctx, ws, source)
	if err != nil || !found {
		return err
	}
	_, err = tx.execFixed(tx.with(ctx), addFamilyForksSQL, forkFamiliesTable.values(&familyRow{ws, root, delta})...)
	return classify(err, "count forks of the family of %s", source)
}

// moveFamilyUnder runs after a lineage made target a member of source's family: what target
// counted as a root (normally nothing: a fork's target is a new session) now counts in source's
// family.
func (tx *txn) moveFamilyUnder(ctx context.Context, ws, source, target string) error {
	n, err := tx.queryInt(ctx, familyCountOfSQL, ws, target)
	if err != nil || n == 0 {
		return classify(err, "read the fork count of %s", target)
	}
	if err := tx.addFamilyForks(ctx, ws, source, n); err != nil {
		return err
	}
	_, err = tx.execFixed(tx.with(ctx), dropFamilySQL, ws, target)
	return classify(err, "drop the fork count of %s", target)
}

// familiesTouchedByPurge lists, before purging id, the roots whose counts the purge changes: the
// root of every source of an operation it removes, and every session forked from id, which
// becomes the root of its own subtree.
func (tx *txn) familiesTouchedByPurge(ctx context.Context, ws, id string) ([]string, error) {
	var children []string
	sources, err := tx.queryStrings(ctx, `SELECT DISTINCT source_session_id FROM fork_operations
		WHERE workspace_id = ? AND (source_session_id = ? OR target_session_id = ?)`, ws, id, id)
	if err == nil {
		children, err = tx.queryStrings(ctx, `SELECT target_session_id FROM lineages WHERE workspace_id = ? AND source_session_id = ?`, ws, id)
	}
	if err != nil {
		return nil, classify(err, "families touched by purging %s", id)
	}
	roots := children
	for _, s := range sources {
		root, found, err := tx.rootOf(ctx, ws, s)
		if err != nil {
			return nil, err
		}
		if found {
			roots = append(roots, root)
		}
	}
	return roots, nil
}

const parentSQL = `SELECT source_session_id FROM lineages WHERE workspace_id = ? AND target_session_id = ?`

// rootOf walks the lineages up from id, one primary-key probe per generation (a recursive
// statement doing the same measured ~20× slower on SQLite); found is false only inside a
// corrupt cycle, which has no root.
func (tx *txn) rootOf(ctx context.Context, ws, id string) (root string, found bool, err error) {
	visited := map[string]bool{}
	for root = id; !visited[root]; {
		visited[root] = true
		tx.statements.Add(1)
		var parent string
		err := tx.db.Statement.ConnPool.QueryRowContext(ctx, tx.dialect.placeholders(parentSQL), ws, root).Scan(&parent)
		if errors.Is(err, sql.ErrNoRows) {
			return root, true, nil
		}
		if err != nil {
			return "", false, classify(err, "find the family root of %s", id)
		}
		root = parent
	}
	return "", false, nil
}

// recountFamilies sets each root's count from the rows.
func (tx *txn) recountFamilies(ctx context.Context, ws string, roots []string) error {
	for _, root := range roots {
		if _, err := tx.execFixed(tx.with(ctx), recountFamilySQL, root, ws, ws, root, ws); err != nil {
			return classify(err, "recount forks of the family of %s", root)
		}
	}
	return nil
}

// CountFamilyForks counts the forks of the family rooted at rootID that did not fail. For a root
// (a session no lineage leads to, the only kind a title asks about) it reads the count the
// writes keep; for a session inside a family it counts the sub-family's committed forks (its
// lineages, transitively) and unfinished operations in one statement.
func (q queries) CountFamilyForks(ctx context.Context, ws, rootID string) (int, error) {
	n, err := q.queryInt(ctx, rootCountSQL, ws, rootID, ws, rootID)
	if err == nil && n < 0 {
		n, err = q.queryInt(ctx, countFamilyForksSQL, rootID, ws, ws, rootID, ws)
	}
	if err != nil {
		return 0, classify(err, "count forks of the family of %s", rootID)
	}
	return int(n), nil
}
