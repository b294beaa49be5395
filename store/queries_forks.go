package store

import (
	"context"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Paged forks of a session (Session.forksConnection): per source, the lineages after (or before)
// a (forked_at_us, target_session_id) cursor, found by seeks on lineages_by_source, in one
// statement for a batch of sources. PostgreSQL reads each source's page through a LATERAL
// subquery with ORDER BY … LIMIT. SQLite, which has none, bounds each source's range by the
// forked_at_us of its page's last row (a correlated subquery that walks the index and stops
// there); rows of the same microsecond past that row are read too and dropped in Go, so a page
// reads its rows plus the ties of its last instant.

// lineageKeyset is the keyset condition on alias a's (forked_at_us, target_session_id) for a
// cursor, and its arguments; empty for the zero cursor.
func lineageKeyset(a string, c forkengine.PageCursor, backward bool) (string, []any) {
	if c.IsZero() {
		return "", nil
	}
	op := ">"
	if backward {
		op = "<"
	}
	return " AND (" + a + ".forked_at_us, " + a + ".target_session_id) " + op + " (?, ?)", []any{micros(c.Time), c.ID}
}

func lineagePageSQL(d dialect, ids int, c forkengine.PageCursor, backward bool, n int) (string, []any) {
	dir := ""
	if backward {
		dir = " DESC"
	}
	order := " ORDER BY l.forked_at_us" + dir + ", l.target_session_id" + dir
	cond, cargs := lineageKeyset("l", c, backward)
	cols := lineagesTable.listAfterWorkspace("l.")
	if d.lateralJoins {
		query := idsCTE(d, ids) + "SELECT " + lineagesTable.listAfterWorkspace("p.") + ` FROM ids CROSS JOIN LATERAL (
	SELECT * FROM lineages l WHERE l.workspace_id = ? AND l.source_session_id = ids.id` + cond + order + ` LIMIT ?) p
	ORDER BY p.source_session_id, p.forked_at_us` + dir + `, p.target_session_id` + dir
		return query, append(append([]any{nil}, cargs...), n)
	}
	xcond, _ := lineageKeyset("x", c, backward)
	bound := " AND l.forked_at_us <= COALESCE((SELECT x.forked_at_us FROM lineages x WHERE x.workspace_id = l.workspace_id" +
		" AND x.source_session_id = ids.id" + xcond + " ORDER BY x.forked_at_us, x.target_session_id LIMIT 1 OFFSET ?), 9223372036854775807)"
	if backward {
		bound = " AND l.forked_at_us >= COALESCE((SELECT x.forked_at_us FROM lineages x WHERE x.workspace_id = l.workspace_id" +
			" AND x.source_session_id = ids.id" + xcond + " ORDER BY x.forked_at_us DESC, x.target_session_id DESC LIMIT 1 OFFSET ?), -9223372036854775807)"
	}
	query := idsCTE(d, ids) + "SELECT " + cols + ` FROM ids CROSS JOIN lineages l WHERE l.workspace_id = ? AND l.source_session_id = ids.id` +
		cond + bound + " ORDER BY l.source_session_id, l.forked_at_us" + dir + ", l.target_session_id" + dir
	args := append([]any{nil}, cargs...)
	return query, append(append(args, cargs...), n-1)
}

// LineagesBySourceIDsAfter returns per source up to limit lineages after the cursor.
func (q queries) LineagesBySourceIDsAfter(ctx context.Context, ws string, sourceIDs []string, after forkengine.PageCursor, limit int) (map[string][]forkengine.Lineage, error) {
	return q.lineagePages(ctx, ws, sourceIDs, after, limit, false)
}

// LineagesBySourceIDsBefore returns per source up to limit lineages before the cursor, newest first.
func (q queries) LineagesBySourceIDsBefore(ctx context.Context, ws string, sourceIDs []string, before forkengine.PageCursor, limit int) (map[string][]forkengine.Lineage, error) {
	return q.lineagePages(ctx, ws, sourceIDs, before, limit, true)
}

func (q queries) lineagePages(ctx context.Context, ws string, sourceIDs []string, c forkengine.PageCursor, limit int, backward bool) (map[string][]forkengine.Lineage, error) {
	limit = max(limit, 1)
	out := map[string][]forkengine.Lineage{}
	err := q.inChunks(sourceIDs, func(chunk []string) error {
		query, rest := lineagePageSQL(q.dialect, len(chunk), c, backward, limit)
		rest[0] = ws // the workspace of the outer (SQLite) or LATERAL (PostgreSQL) read
		err := eachOfWorkspace(ctx, q, lineagesTable, ws, query, idArgs(q.dialect, chunk, rest...), func(l *forkengine.Lineage) {
			if len(out[l.SourceSessionID]) < limit { // SQLite's ties past the page's last row
				out[l.SourceSessionID] = append(out[l.SourceSessionID], *l)
			}
		})
		return classify(err, "fork pages of %d sessions", len(chunk))
	})
	return out, err
}

// CountLineagesBySourceIDs counts each source's lineages.
func (q queries) CountLineagesBySourceIDs(ctx context.Context, ws string, sourceIDs []string) (map[string]int, error) {
	out := map[string]int{}
	err := q.inChunks(sourceIDs, func(chunk []string) error {
		in, args := q.inList(chunk, ws)
		var sid string
		var n int64
		err := scanEach(ctx, q, "SELECT source_session_id, COUNT(*) FROM lineages WHERE workspace_id = ? AND source_session_id IN "+in+
			" GROUP BY source_session_id", args, []any{&sid, &n}, func() { out[sid] = int(n) })
		return classify(err, "fork counts of %d sessions", len(chunk))
	})
	return out, err
}
