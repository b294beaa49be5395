package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"math"
	"strings"

	"gorm.io/gorm"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Shared history (docs/design/shared-history.md §5): a committed fork's History is one row of
// histories and its segments rows of history_segments. Every per-session turn read selects over
// the session's spans, its own rows and one span per segment, in one statement, and merges them
// in Go (mergeSpans): at a shared sequence the span of the highest ordinal wins, the session's
// own rows highest of all. An inherited row is turned into the child's view in one place,
// forkengine.PresentTurn and PresentMessage.

// historiesTable and segmentsTable describe the two tables (table.go).
var historiesTable = newTable("histories", []string{"workspace_id", "session_id"},
	textColumn("workspace_id", func(h *forkengine.History) *string { return &h.WorkspaceID }),
	textColumn("session_id", func(h *forkengine.History) *string { return &h.SessionID }),
	textColumn("history_key", func(h *forkengine.History) *string { return &h.Key }),
	integerColumn("boundary", func(h *forkengine.History) *int64 { return &h.Boundary }),
	intColumn("prefix_turns", func(h *forkengine.History) *int { return &h.PrefixTurns }),
	intColumn("inherited_turns", func(h *forkengine.History) *int { return &h.InheritedTurns }),
)

// segmentRow is one stored segment: the History it belongs to, its place in it, the segment.
type segmentRow struct {
	WorkspaceID, SessionID, Key string
	Ordinal                     int64
	forkengine.HistorySegment
}

var segmentsTable = newTable("history_segments", []string{"workspace_id", "session_id", "ordinal"},
	textColumn("workspace_id", func(s *segmentRow) *string { return &s.WorkspaceID }),
	textColumn("session_id", func(s *segmentRow) *string { return &s.SessionID }),
	integerColumn("ordinal", func(s *segmentRow) *int64 { return &s.Ordinal }),
	textColumn("history_key", func(s *segmentRow) *string { return &s.Key }),
	textColumn("owner_workspace_id", func(s *segmentRow) *string { return &s.OwnerWorkspaceID }),
	textColumn("owner_session_id", func(s *segmentRow) *string { return &s.OwnerSessionID }),
	integerColumn("from_sequence", func(s *segmentRow) *int64 { return &s.From }),
	integerColumn("to_sequence", func(s *segmentRow) *int64 { return &s.To }),
	integerColumn("watermark", func(s *segmentRow) *int64 { return &s.Watermark }),
)

// historyMigration creates the tables (migration 15).
var historyMigration = []string{
	`CREATE TABLE histories (
		workspace_id    TEXT   NOT NULL,
		session_id      TEXT   NOT NULL,
		history_key     TEXT   NOT NULL,
		boundary        BIGINT NOT NULL,
		prefix_turns    BIGINT NOT NULL,
		inherited_turns BIGINT NOT NULL,
		PRIMARY KEY (workspace_id, session_id)
	)`,
	`CREATE UNIQUE INDEX histories_by_key ON histories (workspace_id, history_key)`,
	`CREATE TABLE history_segments (
		workspace_id       TEXT   NOT NULL,
		session_id         TEXT   NOT NULL,
		ordinal            BIGINT NOT NULL,
		history_key        TEXT   NOT NULL,
		owner_workspace_id TEXT   NOT NULL,
		owner_session_id   TEXT   NOT NULL,
		from_sequence      BIGINT NOT NULL,
		to_sequence        BIGINT NOT NULL,
		watermark          BIGINT NOT NULL,
		PRIMARY KEY (workspace_id, session_id, ordinal)
	)`,
	// A presented id names its child by key; a purge asks who still reads an owner's rows.
	`CREATE INDEX history_segments_by_key ON history_segments (workspace_id, history_key, ordinal)`,
	`CREATE INDEX history_segments_by_owner ON history_segments (owner_workspace_id, owner_session_id)`,
}

// ownOrdinal is the ordinal of a session's own span: above every segment's.
const ownOrdinal = math.MaxInt32

// HistoryOf returns the session's History.
func (q queries) HistoryOf(ctx context.Context, ws, sessionID string) (forkengine.History, bool, error) {
	rows, err := queryAll(ctx, q, historiesTable, "SELECT "+historiesTable.list("")+
		" FROM histories WHERE workspace_id = ? AND session_id = ?", ws, sessionID)
	if err != nil || len(rows) == 0 {
		return forkengine.History{}, false, classify(err, "history of %s", sessionID)
	}
	h := rows[0]
	err = eachOf(ctx, q, segmentsTable, "SELECT "+segmentsTable.list("")+
		" FROM history_segments WHERE workspace_id = ? AND session_id = ? ORDER BY ordinal", []any{ws, sessionID},
		func(s *segmentRow) { h.Segments = append(h.Segments, s.HistorySegment) })
	return h, true, classify(err, "segments of %s", sessionID)
}

// HistoryClock returns the workspace's last message position.
func (q queries) HistoryClock(ctx context.Context, ws string) (int64, error) {
	n, err := q.queryInt(ctx, "SELECT COALESCE((SELECT value FROM counters WHERE scope = ? AND name = 'message_position'), 0)", ws)
	return n, classify(err, "history clock of %s", ws)
}

// InsertHistory stores h. ErrDuplicate when the session or the key has one.
func (tx *txn) InsertHistory(ctx context.Context, h forkengine.History) error {
	rows := make([]segmentRow, len(h.Segments))
	for i, s := range h.Segments {
		rows[i] = segmentRow{WorkspaceID: h.WorkspaceID, SessionID: h.SessionID, Key: h.Key, Ordinal: int64(i), HistorySegment: s}
	}
	return tx.guarded(ctx, func(db *gorm.DB) error {
		if _, err := tx.execFixed(db, insertSQL("histories", historiesTable.names, 1), historiesTable.values(&h)...); err != nil {
			return classify(err, "insert history of %s", h.SessionID)
		}
		return classify(insertRows(tx.execWith(db), segmentsTable, rows, false), "insert %d segments of %s", len(rows), h.SessionID)
	})
}

// spansCTE names, per session of the ids CTE, the spans its turns are read from: spans (sid,
// ord, ows, owner, lo, hi, hkey, wm), its own rows (ordinal ownOrdinal) and each segment.
// Arguments: idArgs, then the workspace twice (spansArgs).
func spansCTE(d dialect, n int) string {
	return strings.TrimSuffix(idsCTE(d, n), " ") + `, spans (sid, ord, ows, owner, lo, hi, hkey, wm) AS (
	SELECT ids.id, 2147483647, CAST(? AS TEXT), ids.id, 0, 9223372036854775807, '', 9223372036854775807 FROM ids
	UNION ALL
	SELECT g.session_id, g.ordinal, g.owner_workspace_id, g.owner_session_id, g.from_sequence, g.to_sequence, g.history_key, g.watermark
	FROM ids ` + seekPerRow(d, "history_segments", "g", "g.workspace_id = ? AND g.session_id = ids.id") + `) `
}

// seekPerRow joins table (aliased alias) to the rows before it by cond, which must seek an
// index once per such row. SQLite keeps a CROSS JOIN in the order written; PostgreSQL reorders a
// join by its estimates (a segments table it believes small it would walk whole for the
// workspace), so there it is a LATERAL subquery that OFFSET 0 keeps from being flattened.
func seekPerRow(d dialect, table, alias, cond string) string {
	if d.lateralJoins {
		return "CROSS JOIN LATERAL (SELECT * FROM " + table + " " + alias + " WHERE " + cond + " OFFSET 0) " + alias
	}
	return "CROSS JOIN " + table + " " + alias + " WHERE " + cond
}

func spansArgs(d dialect, ids []string, ws string, rest ...any) []any {
	return idArgs(d, ids, append([]any{ws, ws}, rest...)...)
}

// spanHead is what a span read selects before the turn's columns.
const spanHead = "s.sid, s.ord, s.hkey, "

// greatest and least are the dialect's two-argument max and min of a parameter and a column.
func greatest(d dialect, param, col string) string {
	if d.lateralJoins {
		return "GREATEST(CAST(" + param + " AS BIGINT), " + col + ")"
	}
	return "MAX(" + param + ", " + col + ")"
}

func least(d dialect, param, col string) string {
	if d.lateralJoins {
		return "LEAST(CAST(" + param + " AS BIGINT), " + col + ")"
	}
	return "MIN(" + param + ", " + col + ")"
}

// spanTurnsAfterSQL selects, per span, up to n (n <= 0: every) turns with sequence > after in
// the span's range, in sequence order. Arguments: spansArgs, then spanTurnsAfterArgs.
func spanTurnsAfterSQL(d dialect, ids, n int) string {
	from := greatest(d, "?", "s.lo")
	if d.lateralJoins {
		limit := ""
		if n > 0 {
			limit = " LIMIT ?"
		}
		return spansCTE(d, ids) + "SELECT " + spanHead + qualifiedTurnSelectList + ` FROM spans s CROSS JOIN LATERAL (
	SELECT * FROM turns t WHERE t.workspace_id = s.ows AND t.session_id = s.owner AND t.sequence > ` + from + `
	AND t.sequence <= s.hi ORDER BY t.sequence` + limit + `) t
	ORDER BY s.sid, t.sequence, s.ord DESC`
	}
	bound := ""
	if n > 0 {
		bound = ` AND t.sequence <= COALESCE((SELECT m.sequence FROM turns m WHERE m.workspace_id = s.ows
		AND m.session_id = s.owner AND m.sequence > ` + from + ` AND m.sequence <= s.hi
		ORDER BY m.sequence LIMIT 1 OFFSET ?), s.hi)`
	}
	return spansCTE(d, ids) + "SELECT " + spanHead + qualifiedTurnSelectList + ` FROM spans s CROSS JOIN turns t
	WHERE t.workspace_id = s.ows AND t.session_id = s.owner AND t.sequence > ` + from + ` AND t.sequence <= s.hi` + bound + `
	ORDER BY s.sid, t.sequence, s.ord DESC`
}

func spanTurnsAfterArgs(d dialect, after int64, n int) []any {
	switch {
	case n <= 0:
		return []any{after}
	case d.lateralJoins:
		return []any{after, n}
	}
	return []any{after, after, n - 1}
}

// spanTurnsBeforeSQL selects, per span, up to n (n <= 0: every) turns with sequence <= upTo in
// the span's range, highest sequence first. Arguments: spansArgs, then spanTurnsBeforeArgs.
func spanTurnsBeforeSQL(d dialect, ids, n int) string {
	to := least(d, "?", "s.hi")
	if d.lateralJoins {
		limit := ""
		if n > 0 {
			limit = " LIMIT ?"
		}
		return spansCTE(d, ids) + "SELECT " + spanHead + qualifiedTurnSelectList + ` FROM spans s CROSS JOIN LATERAL (
	SELECT * FROM turns t WHERE t.workspace_id = s.ows AND t.session_id = s.owner AND t.sequence <= ` + to + `
	AND t.sequence > s.lo ORDER BY t.sequence DESC` + limit + `) t
	ORDER BY s.sid, t.sequence DESC, s.ord DESC`
	}
	bound := ""
	if n > 0 {
		bound = ` AND t.sequence >= COALESCE((SELECT m.sequence FROM turns m WHERE m.workspace_id = s.ows
		AND m.session_id = s.owner AND m.sequence <= ` + to + ` AND m.sequence > s.lo
		ORDER BY m.sequence DESC LIMIT 1 OFFSET ?), s.lo + 1)`
	}
	return spansCTE(d, ids) + "SELECT " + spanHead + qualifiedTurnSelectList + ` FROM spans s CROSS JOIN turns t
	WHERE t.workspace_id = s.ows AND t.session_id = s.owner AND t.sequence <= ` + to + ` AND t.sequence > s.lo` + bound + `
	ORDER BY s.sid, t.sequence DESC, s.ord DESC`
}

func spanTurnsBeforeArgs(d dialect, upTo int64, n int) []any {
	switch {
	case n <= 0:
		return []any{upTo}
	case d.lateralJoins:
		return []any{upTo, n}
	}
	return []any{upTo, upTo, n - 1}
}

// spanTurns runs a span read of sessionIDs and merges each session's spans into its turns:
// query and args read the spans, in the order the merge keeps (each session's rows by sequence,
// the winning span first at a shared sequence), n bounds each session's turns (n <= 0: all).
func (q queries) spanTurns(ctx context.Context, ws string, sessionIDs []string, n int,
	read func(chunk []string) (string, []any), out map[string][]forkengine.Turn) error {
	return q.inChunks(sessionIDs, func(chunk []string) error {
		query, args := read(chunk)
		var sid, hkey string
		var ord int64
		var t forkengine.Turn
		last := map[string]int64{} // per session, the sequence of the row kept last
		targets := append([]any{&sid, &ord, &hkey}, turnsTable.targets(&t)...)
		err := scanEach(ctx, q, query, args, targets, func() {
			turns := out[sid]
			if seq, seen := last[sid]; (seen && seq == t.Sequence) || (n > 0 && len(turns) >= n) {
				return // a lower span at the same sequence, or the page is full
			}
			last[sid] = t.Sequence
			if ord != ownOrdinal {
				t = forkengine.PresentTurn(forkengine.History{WorkspaceID: ws, SessionID: sid, Key: hkey}, t)
			}
			out[sid] = append(turns, t)
		})
		return classify(err, "turns of %d sessions", len(chunk))
	})
}

// physicalTurns are the stored rows among ids.
func (q queries) physicalTurns(ctx context.Context, ws string, ids []string, out map[string]forkengine.Turn) error {
	return q.inChunks(ids, func(chunk []string) error {
		in, args := q.inList(chunk, ws)
		err := eachOfWorkspace(ctx, q, turnsTable, ws, "SELECT "+turnColumnsOfWorkspace+" FROM turns WHERE workspace_id = ? AND id IN "+in, args,
			func(t *forkengine.Turn) { out[t.ID] = *t })
		return classify(err, "turns by ids")
	})
}

// presentedTurns resolves the presented turn ids among ids that out lacks: one statement.
func (q queries) presentedTurns(ctx context.Context, ws string, ids []string, out map[string]forkengine.Turn) error {
	var values []string
	var args []any
	for _, id := range ids {
		if _, ok := out[id]; ok {
			continue
		}
		if key, seq, ok := forkengine.ParsePresentedTurnID(id); ok {
			values = append(values, "(CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT))")
			args = append(args, id, key, seq)
		}
	}
	if len(values) == 0 {
		return nil
	}
	query := "WITH want (id, hkey, seq) AS (VALUES " + strings.Join(values, ", ") + `),
	resolved AS (SELECT want.id, want.seq, g.session_id, g.history_key, g.ordinal, g.owner_workspace_id, g.owner_session_id
		FROM want ` + seekPerRow(q.dialect, "history_segments", "g",
		"g.workspace_id = ? AND g.history_key = want.hkey AND g.from_sequence < want.seq AND g.to_sequence >= want.seq") + `)
	SELECT r.id, r.session_id, r.history_key, ` + qualifiedTurnSelectList + ` FROM resolved r CROSS JOIN turns t
	WHERE t.workspace_id = r.owner_workspace_id AND t.session_id = r.owner_session_id AND t.sequence = r.seq
	ORDER BY r.id, r.ordinal DESC`
	var id, sid, hkey string
	var t forkengine.Turn
	targets := append([]any{&id, &sid, &hkey}, turnsTable.targets(&t)...)
	err := scanEach(ctx, q, query, append(args, ws), targets, func() {
		if _, done := out[id]; !done {
			out[id] = forkengine.PresentTurn(forkengine.History{WorkspaceID: ws, SessionID: sid, Key: hkey}, t)
		}
	})
	return classify(err, "presented turns")
}

// messagesOfTurnsSQL reads the messages of the turns in want (ids), stored under their ids and,
// for a turn of a sequence a segment presents, the segment owner's messages of that sequence up
// to its watermark, in (turn, position) order. pres holds the presented ids among them, decoded
// (id, key, sequence). It selects tid, inherited, sid, hkey, seq, position and then columns.
// Arguments: idArgs, the presented values, then the workspace four times.
func messagesOfTurnsSQL(d dialect, ids, presented int, columns string) string {
	pres := "SELECT CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS BIGINT) WHERE 1 = 0"
	if presented > 0 {
		pres = "VALUES (CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT))" + strings.Repeat(", (?, ?, ?)", presented-1)
	}
	return strings.TrimSuffix(idsCTE(d, ids), " ") + `, pres (id, hkey, seq) AS (` + pres + `),
	keyed (tid, sid, seq) AS (
		SELECT ids.id, t.session_id, t.sequence FROM ids CROSS JOIN turns t WHERE t.workspace_id = ? AND t.id = ids.id
		UNION
		SELECT pres.id, h.session_id, pres.seq FROM pres ` + seekPerRow(d, "histories", "h",
		"h.workspace_id = ? AND h.history_key = pres.hkey AND pres.seq <= h.boundary") + `),
	src (tid, sid, seq, hkey, ows, owner, wm) AS (
		SELECT k.tid, k.sid, k.seq, g.history_key, g.owner_workspace_id, g.owner_session_id, g.watermark
		FROM keyed k ` + seekPerRow(d, "history_segments", "g",
		"g.workspace_id = ? AND g.session_id = k.sid AND g.from_sequence < k.seq AND g.to_sequence >= k.seq") + `)
	SELECT ids.id, 0, '', '', 0, m.position, ` + columns + ` FROM ids CROSS JOIN messages m WHERE m.workspace_id = ? AND m.turn_id = ids.id
	UNION ALL
	SELECT src.tid, 1, src.sid, src.hkey, src.seq, m.position, ` + columns + ` FROM src CROSS JOIN turns t CROSS JOIN messages m
	WHERE t.workspace_id = src.ows AND t.session_id = src.owner AND t.sequence = src.seq
	AND m.workspace_id = src.ows AND m.turn_id = t.id AND m.position <= src.wm
	ORDER BY 1, 6`
}

// messagesOfTurns reads turnIDs' messages (messagesOfTurnsSQL) into targets of one message m and
// groups them by turn in Position order; full says the columns make whole messages, which are
// presented when inherited.
func (q queries) messagesOfTurns(ctx context.Context, ws string, turnIDs []string, columns string,
	targets func(*forkengine.Message) []any, full bool,
) (map[string][]forkengine.Message, error) {
	out := make(map[string][]forkengine.Message, len(turnIDs))
	err := q.inChunks(turnIDs, func(chunk []string) error {
		var presented []any
		for _, id := range chunk {
			if key, seq, ok := forkengine.ParsePresentedTurnID(id); ok {
				presented = append(presented, id, key, seq)
			}
		}
		args := idArgs(q.dialect, chunk, presented...)
		args = append(args, ws, ws, ws, ws)
		var tid, sid, hkey string
		var inherited, seq, position int64
		m := forkengine.Message{WorkspaceID: ws}
		head := []any{&tid, &inherited, &sid, &hkey, &seq, &position}
		all := make([]forkengine.Message, 0, 2*len(chunk))
		err := scanEach(ctx, q, messagesOfTurnsSQL(q.dialect, len(chunk), len(presented)/3, columns), args,
			append(head, targets(&m)...), func() {
				got := m
				got.TurnID = tid
				if inherited == 1 && full {
					got.Position = position
					got = forkengine.PresentMessage(forkengine.History{WorkspaceID: ws, SessionID: sid, Key: hkey}, seq, got)
				}
				all = append(all, got)
			})
		if err != nil {
			return classify(err, "messages by turns")
		}
		for start, i := 0, 1; i <= len(all); i++ {
			if i == len(all) || all[i].TurnID != all[start].TurnID {
				out[all[start].TurnID] = all[start:i:i] // capped: an append by the caller copies
				start = i
			}
		}
		return nil
	})
	return out, err
}

// presentedMessages resolves the presented message ids among ids that out lacks.
func (q queries) presentedMessages(ctx context.Context, ws string, ids []string, out map[string]forkengine.Message) error {
	var values []string
	var args []any
	for _, id := range ids {
		if _, ok := out[id]; ok {
			continue
		}
		if key, seq, position, ok := forkengine.ParsePresentedMessageID(id); ok {
			values = append(values, "(CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS BIGINT))")
			args = append(args, id, key, seq, position)
		}
	}
	if len(values) == 0 {
		return nil
	}
	query := "WITH want (id, hkey, seq, pos) AS (VALUES " + strings.Join(values, ", ") + `),
	resolved AS (SELECT want.id, want.seq, want.pos, g.session_id, g.history_key, g.owner_workspace_id, g.owner_session_id
		FROM want ` + seekPerRow(q.dialect, "history_segments", "g", "g.workspace_id = ? AND g.history_key = want.hkey "+
		"AND g.from_sequence < want.seq AND g.to_sequence >= want.seq AND want.pos <= g.watermark") + `)
	SELECT r.id, r.session_id, r.history_key, r.seq, ` + messagesTable.list("m.") + ` FROM resolved r CROSS JOIN turns t CROSS JOIN messages m
	WHERE t.workspace_id = r.owner_workspace_id AND t.session_id = r.owner_session_id AND t.sequence = r.seq
	AND m.workspace_id = r.owner_workspace_id AND m.turn_id = t.id AND m.position = r.pos`
	var id, sid, hkey string
	var seq int64
	var m forkengine.Message
	targets := append([]any{&id, &sid, &hkey, &seq}, messagesTable.targets(&m)...)
	err := scanEach(ctx, q, query, append(args, ws), targets, func() {
		out[id] = forkengine.PresentMessage(forkengine.History{WorkspaceID: ws, SessionID: sid, Key: hkey}, seq, m)
	})
	return classify(err, "presented messages")
}

// adoptInheritedTurns gives each session a row of its own for the inherited turns among ids
// (messages are about to be appended to them): the turn as it presents it, under its presented
// id, so the messages' foreign key holds and later reads find the turn's own messages beside the
// inherited ones. The session then inherits one turn fewer.
func (tx *txn) adoptInheritedTurns(ctx context.Context, ws string, ids []string) error {
	var presented []string
	for _, id := range ids {
		if _, _, ok := forkengine.ParsePresentedTurnID(id); ok {
			presented = append(presented, id)
		}
	}
	if len(presented) == 0 {
		return nil
	}
	stored := map[string]forkengine.Turn{}
	if err := tx.physicalTurns(ctx, ws, presented, stored); err != nil {
		return err
	}
	inherited := map[string]forkengine.Turn{}
	for id, t := range stored {
		inherited[id] = t // placeholders, so presentedTurns skips what is stored
	}
	if err := tx.presentedTurns(ctx, ws, presented, inherited); err != nil {
		return err
	}
	for id, t := range inherited {
		if _, ok := stored[id]; ok {
			continue
		}
		if err := tx.InsertTurns(ctx, []forkengine.Turn{t}); err != nil {
			return err
		}
		if _, err := tx.execFixed(tx.with(ctx), `UPDATE histories SET inherited_turns = inherited_turns - 1
			WHERE workspace_id = ? AND session_id = ?`, ws, t.SessionID); err != nil {
			return classify(err, "adopt turn %s", id)
		}
	}
	return nil
}

// purgeHistory runs before the rows of purged session id are deleted. Rows of id that another
// session's History still reads are moved to a tombstone workspace of their own (a control
// character starts it, so no client can ever name it, and a purged id reported again is a new,
// empty session): its session row copied, its turns copied and its messages moved there, and the
// segments naming id renamed. The session's own History is then dropped, and every tombstone it
// was the last to read is deleted.
func (tx *txn) purgeHistory(ctx context.Context, ws, id string) error {
	read, err := tx.queryInt(ctx, `SELECT COUNT(*) FROM history_segments WHERE owner_workspace_id = ? AND owner_session_id = ?
		AND NOT (workspace_id = ? AND session_id = ?)`, ws, id, ws, id)
	if err != nil {
		return classify(err, "readers of the rows of %s", id)
	}
	if read > 0 {
		if err := tx.moveToTombstone(ctx, ws, id); err != nil {
			return err
		}
	}
	var owners []segmentRow
	err = eachOf(ctx, tx.queries, segmentsTable, "SELECT "+segmentsTable.list("")+
		" FROM history_segments WHERE workspace_id = ? AND session_id = ?", []any{ws, id},
		func(s *segmentRow) { owners = append(owners, *s) })
	if err != nil {
		return classify(err, "segments of %s", id)
	}
	for _, stmt := range []string{"DELETE FROM history_segments WHERE workspace_id = ? AND session_id = ?",
		"DELETE FROM histories WHERE workspace_id = ? AND session_id = ?"} {
		if _, err := tx.execFixed(tx.with(ctx), stmt, ws, id); err != nil {
			return classify(err, "drop the history of %s", id)
		}
	}
	for _, o := range owners {
		if o.OwnerWorkspaceID == ws {
			continue // a live session's rows, purged with it
		}
		left, err := tx.queryInt(ctx, "SELECT COUNT(*) FROM history_segments WHERE owner_workspace_id = ? AND owner_session_id = ?",
			o.OwnerWorkspaceID, o.OwnerSessionID)
		if err != nil {
			return classify(err, "readers of tombstone rows")
		}
		if left == 0 {
			if err := tx.dropTombstone(ctx, o.OwnerWorkspaceID); err != nil {
				return err
			}
		}
	}
	return nil
}

// tombstonePrefix starts every tombstone workspace: a control character, refused in every id.
const tombstonePrefix = "\x01purged/"

func (tx *txn) moveToTombstone(ctx context.Context, ws, id string) error {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
	tomb := tombstonePrefix + hex.EncodeToString(b[:])
	db := tx.with(ctx)
	copyRows := func(t string, names []string, where string) error {
		sel := "CAST(? AS TEXT), " + strings.Join(names[1:], ", ")
		_, err := tx.execFixed(db, "INSERT INTO "+t+" ("+strings.Join(names, ", ")+") SELECT "+sel+" FROM "+t+" WHERE "+where, tomb, ws, id)
		return err
	}
	steps := []func() error{
		func() error { return copyRows("sessions", sessionsTable.names, "workspace_id = ? AND id = ?") },
		func() error { return copyRows("turns", turnsTable.names, "workspace_id = ? AND session_id = ?") },
		func() error {
			_, err := tx.execFixed(db, `UPDATE messages SET workspace_id = ? WHERE workspace_id = ?
				AND turn_id IN (SELECT t.id FROM turns t WHERE t.workspace_id = ? AND t.session_id = ?)`, tomb, ws, ws, id)
			return err
		},
		func() error {
			_, err := tx.execFixed(db, "DELETE FROM turns WHERE workspace_id = ? AND session_id = ?", ws, id)
			return err
		},
		func() error {
			_, err := tx.execFixed(db, `UPDATE history_segments SET owner_workspace_id = ?
				WHERE owner_workspace_id = ? AND owner_session_id = ?`, tomb, ws, id)
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return classify(err, "keep the shared rows of %s", id)
		}
	}
	return nil
}

// dropTombstone deletes a tombstone workspace's rows, its session's included.
func (tx *txn) dropTombstone(ctx context.Context, tomb string) error {
	for _, t := range []string{"messages", "turns", "turn_counts", "sessions", "session_counts"} {
		if _, err := tx.execFixed(tx.with(ctx), "DELETE FROM "+t+" WHERE workspace_id = ?", tomb); err != nil {
			return classify(err, "free the shared rows of %s", tomb)
		}
	}
	return nil
}
