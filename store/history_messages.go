package store

import (
	"context"
	"strings"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Paged transcripts (docs/design/shared-history.md §7). A session's transcript is, per span of
// the session (its own rows and each History segment, spansCTE), the span owner's messages of the
// turns in the span's range up to its watermark; every span contributes, and a message belongs to
// one span only (a message is its turn's, a turn its owner's), so a page is the first rows of the
// spans' streams merged in (turn sequence, position) order. Each span's stream is cut to the
// page in SQL, so a page reads O(page) rows per span whatever the transcript's length, in one
// statement for a batch of sessions:
//   - PostgreSQL reads each span through a LATERAL subquery, itself a LATERAL per turn, ordered
//     and limited (the turn's messages are found by messages_by_turn, from the cursor).
//   - SQLite has no LATERAL: each span first finds, with two correlated subqueries that walk the
//     two indexes in order and stop at the page's last row, the sequence and position the page
//     ends at (bnd, materialised so each runs once per span); the rows are then read between the
//     cursor and that end, both bounds being index ranges.

// messagePageDirection is what differs between a forward and a backward page.
type messagePageDirection struct {
	backward bool
}

func (p messagePageDirection) order() string {
	if p.backward {
		return " DESC"
	}
	return ""
}

// turnRange bounds the turns of span alias a from the cursor's sequence (one argument).
func (p messagePageDirection) turnRange(d dialect, a string) string {
	if p.backward {
		return "t.sequence <= " + least(d, "?", a+".hi") + " AND t.sequence > " + a + ".lo"
	}
	return "t.sequence >= " + greatest(d, "?", a+".lo + 1") + " AND t.sequence <= " + a + ".hi"
}

// cursorSide bounds the positions of the cursor's own turn (arguments: sequence, position) and
// every position by the span's watermark; end is the bound on the side away from the cursor.
func (p messagePageDirection) cursorSide(d dialect, a, end string) string {
	if p.backward {
		return "m.position <= CASE WHEN t.sequence = ? THEN " + least(d, "CAST(? AS BIGINT) - 1", a+".wm") + " ELSE " + a + ".wm END" +
			" AND m.position >= " + end
	}
	return "m.position > CASE WHEN t.sequence = ? THEN CAST(? AS BIGINT) ELSE 0 END AND m.position <= " + end
}

// sessionMessagesSQL reads a page of each session's transcript, selecting sid, ord, hkey, the
// span's via, the turn's sequence, then every column of messages. Arguments: spansArgs, then
// sessionMessagesArgs.
func sessionMessagesSQL(d dialect, ids int, p messagePageDirection) string {
	cols, dir := messagesTable.list("m."), p.order()
	far := "s.wm" // the bound of a span's stream away from the cursor
	if p.backward {
		far = "0"
	}
	if d.lateralJoins {
		return spansCTE(d, ids) + "SELECT s.sid, s.ord, s.hkey, " + strings.ReplaceAll(viaIfTyped("s.via"), "m.", "x.") + ", x.seq, " + messagesTable.list("x.") + ` FROM spans s CROSS JOIN LATERAL (
	SELECT t.sequence AS seq, ` + cols + ` FROM turns t CROSS JOIN LATERAL (
		SELECT * FROM messages m WHERE m.workspace_id = s.ows AND m.turn_id = t.id AND ` + p.cursorSide(d, "s", far) + `
		ORDER BY m.position` + dir + ` LIMIT ?) m
	WHERE t.workspace_id = s.ows AND t.session_id = s.owner AND ` + p.turnRange(d, "s") + `
	ORDER BY t.sequence` + dir + `, m.position` + dir + ` LIMIT ?) x
	ORDER BY s.sid, x.seq` + dir + `, x.position` + dir
	}
	walk := ` FROM turns t CROSS JOIN messages m WHERE t.workspace_id = s.ows AND t.session_id = s.owner AND ` +
		p.turnRange(d, "s") + ` AND m.workspace_id = s.ows AND m.turn_id = t.id AND ` + p.cursorSide(d, "s", far) +
		` ORDER BY t.sequence` + dir + `, m.position` + dir + ` LIMIT 1 OFFSET ?`
	seqEnd, posEnd, end := "s.hi", "s.wm", "CASE WHEN t.sequence = b.bseq THEN b.bpos ELSE b.wm END"
	seqBound := "t.sequence <= b.bseq"
	if p.backward {
		seqEnd, posEnd, end = "s.lo + 1", "0", "CASE WHEN t.sequence = b.bseq THEN b.bpos ELSE 0 END"
		seqBound = "t.sequence >= b.bseq"
	}
	return strings.TrimSuffix(spansCTE(d, ids), " ") + `, bnd (sid, ord, ows, owner, lo, hi, hkey, wm, via, bseq, bpos) AS MATERIALIZED (
	SELECT s.sid, s.ord, s.ows, s.owner, s.lo, s.hi, s.hkey, s.wm, s.via,
		COALESCE((SELECT t.sequence` + walk + `), ` + seqEnd + `),
		COALESCE((SELECT m.position` + walk + `), ` + posEnd + `)
	FROM spans s)
	SELECT b.sid, b.ord, b.hkey, ` + viaIfTyped("b.via") + `, t.sequence, ` + cols + ` FROM bnd b CROSS JOIN turns t CROSS JOIN messages m
	WHERE t.workspace_id = b.ows AND t.session_id = b.owner AND ` + p.turnRange(d, "b") + ` AND ` + seqBound + `
	AND m.workspace_id = b.ows AND m.turn_id = t.id AND ` + p.cursorSide(d, "b", end) + `
	ORDER BY b.sid, t.sequence` + dir + `, m.position` + dir
}

// sessionMessagesArgs are the arguments after spansArgs.
func sessionMessagesArgs(d dialect, c forkengine.MessageCursor, n int) []any {
	if d.lateralJoins { // inner: cursor side and limit; outer: turn range and limit
		return []any{c.Sequence, c.Position, n, c.Sequence, n}
	}
	walk := []any{c.Sequence, c.Sequence, c.Position, n - 1}
	args := append(append([]any{}, walk...), walk...)
	return append(args, c.Sequence, c.Sequence, c.Position)
}

// SessionMessagesAfter returns per session up to limit messages after the cursor.
func (q queries) SessionMessagesAfter(ctx context.Context, ws string, sessionIDs []string, after forkengine.MessageCursor, limit int) (map[string][]forkengine.TranscriptMessage, error) {
	return q.sessionMessages(ctx, ws, sessionIDs, after, limit, messagePageDirection{})
}

// SessionMessagesBefore returns per session up to limit messages before the cursor, nearest first.
func (q queries) SessionMessagesBefore(ctx context.Context, ws string, sessionIDs []string, before forkengine.MessageCursor, limit int) (map[string][]forkengine.TranscriptMessage, error) {
	return q.sessionMessages(ctx, ws, sessionIDs, before, limit, messagePageDirection{backward: true})
}

func (q queries) sessionMessages(ctx context.Context, ws string, sessionIDs []string, c forkengine.MessageCursor, limit int,
	p messagePageDirection,
) (map[string][]forkengine.TranscriptMessage, error) {
	limit = max(limit, 1)
	out := map[string][]forkengine.TranscriptMessage{}
	err := q.inChunks(sessionIDs, func(chunk []string) error {
		var sid, hkey, via string
		var vias viaDecoder
		var ord, seq int64
		var m forkengine.Message
		targets := append([]any{&sid, &ord, &hkey, &via, &seq}, messagesTable.targets(&m)...)
		args := append(spansArgs(q.dialect, chunk, ws), sessionMessagesArgs(q.dialect, c, limit)...)
		err := scanEach(ctx, q, sessionMessagesSQL(q.dialect, len(chunk), p), args, targets, func() {
			if len(out[sid]) >= limit {
				return // rows of a lower span beyond the page
			}
			got := m
			if ord != ownOrdinal {
				got = forkengine.PresentMessage(forkengine.History{WorkspaceID: ws, SessionID: sid, Key: hkey}, vias.decode(via), seq, got)
			}
			out[sid] = append(out[sid], forkengine.TranscriptMessage{Message: got, Sequence: seq})
		})
		return classify(err, "transcript pages of %d sessions", len(chunk))
	})
	return out, err
}

// turnSourcesCTE names, per turn of the ids CTE, the streams of messages it shows: msrc (tid,
// sid, seq, hkey, inh, ows, mturn, wm, via), its own messages (stored under its id: inh 0) and, for a
// sequence a History segment presents, the segment owner's turn's messages up to the watermark
// (inh 1), as messagesOfTurnsSQL reads them whole. presented is how many of the ids are
// presented ids (decoded as (id, key, sequence) arguments after the ids). Arguments: idArgs with
// the presented values, then the workspace four times.
func turnSourcesCTE(d dialect, ids, presented int) string {
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
	src (tid, sid, seq, hkey, ows, owner, wm, via) AS (
		SELECT k.tid, k.sid, k.seq, g.history_key, g.owner_workspace_id, g.owner_session_id, g.watermark, g.via
		FROM keyed k ` + seekPerRow(d, "history_segments", "g",
		"g.workspace_id = ? AND g.session_id = k.sid AND g.from_sequence < k.seq AND g.to_sequence >= k.seq") + `),
	msrc (tid, sid, seq, hkey, inh, ows, mturn, wm, via) AS (
		SELECT ids.id, '', 0, '', 0, CAST(? AS TEXT), ids.id, 9223372036854775807, '' FROM ids
		UNION ALL
		SELECT src.tid, src.sid, src.seq, src.hkey, 1, src.ows, t.id, src.wm, src.via FROM src ` + seekPerRow(d, "turns", "t",
		"t.workspace_id = src.ows AND t.session_id = src.owner AND t.sequence = src.seq") + `) `
}

// turnSourcesArgs are the arguments of turnSourcesCTE, followed by rest.
func turnSourcesArgs(d dialect, ws string, chunk []string, rest ...any) []any {
	var presented []any
	for _, id := range chunk {
		if key, seq, ok := forkengine.ParsePresentedTurnID(id); ok {
			presented = append(presented, id, key, seq)
		}
	}
	args := idArgs(d, chunk, presented...)
	return append(append(args, ws, ws, ws, ws), rest...)
}

func presentedCount(chunk []string) int {
	n := 0
	for _, id := range chunk {
		if _, _, ok := forkengine.ParsePresentedTurnID(id); ok {
			n++
		}
	}
	return n
}

// turnMessagesSQL reads a page of each turn's messages: tid, inh, sid, hkey, seq, via, then every
// column of messages. Each stream is cut to the page in SQL (a LATERAL on PostgreSQL; on SQLite
// a correlated subquery that finds the page's last position, an index range bound). Arguments:
// turnSourcesArgs, then turnMessagesArgs.
func turnMessagesSQL(d dialect, ids, presented int, backward bool) string {
	head := turnSourcesCTE(d, ids, presented) + "SELECT msrc.tid, msrc.inh, msrc.sid, msrc.hkey, msrc.seq, " + viaIfTyped("msrc.via") + ", " + messagesTable.list("m.")
	near, dir, far := "m.position > CAST(? AS BIGINT)", "", "m.position <= msrc.wm"
	if backward {
		near, dir, far = "m.position <= "+least(d, "CAST(? AS BIGINT) - 1", "msrc.wm"), " DESC", "m.position >= 0"
	}
	order := " ORDER BY msrc.tid, m.position" + dir
	if d.lateralJoins {
		return head + ` FROM msrc CROSS JOIN LATERAL (SELECT * FROM messages m WHERE m.workspace_id = msrc.ows
	AND m.turn_id = msrc.mturn AND ` + near + ` AND ` + far + ` ORDER BY m.position` + dir + ` LIMIT ?) m` + order
	}
	sub := func(alias string) string {
		return strings.ReplaceAll(near, "m.", alias+".")
	}
	bound := "m.position <= COALESCE((SELECT x.position FROM messages x WHERE x.workspace_id = msrc.ows AND x.turn_id = msrc.mturn AND " +
		sub("x") + " AND x.position <= msrc.wm ORDER BY x.position LIMIT 1 OFFSET ?), msrc.wm)"
	if backward {
		bound = "m.position >= COALESCE((SELECT x.position FROM messages x WHERE x.workspace_id = msrc.ows AND x.turn_id = msrc.mturn AND " +
			sub("x") + " ORDER BY x.position DESC LIMIT 1 OFFSET ?), 0)"
		return head + ` FROM msrc CROSS JOIN messages m WHERE m.workspace_id = msrc.ows AND m.turn_id = msrc.mturn AND ` +
			near + ` AND ` + bound + order
	}
	return head + ` FROM msrc CROSS JOIN messages m WHERE m.workspace_id = msrc.ows AND m.turn_id = msrc.mturn AND ` +
		near + ` AND ` + bound + order
}

func turnMessagesArgs(d dialect, position int64, n int) []any {
	if d.lateralJoins {
		return []any{position, n}
	}
	return []any{position, position, n - 1}
}

// TurnMessagesAfter returns per turn up to limit messages after afterPosition.
func (q queries) TurnMessagesAfter(ctx context.Context, ws string, turnIDs []string, afterPosition int64, limit int) (map[string][]forkengine.Message, error) {
	return q.turnMessagePages(ctx, ws, turnIDs, afterPosition, limit, false)
}

// TurnMessagesBefore returns per turn up to limit messages before beforePosition (<= 0: from the
// last), nearest first.
func (q queries) TurnMessagesBefore(ctx context.Context, ws string, turnIDs []string, beforePosition int64, limit int) (map[string][]forkengine.Message, error) {
	if beforePosition <= 0 {
		beforePosition = forkengine.TranscriptEnd.Position
	}
	return q.turnMessagePages(ctx, ws, turnIDs, beforePosition, limit, true)
}

func (q queries) turnMessagePages(ctx context.Context, ws string, turnIDs []string, position int64, limit int, backward bool) (map[string][]forkengine.Message, error) {
	limit = max(limit, 1)
	out := map[string][]forkengine.Message{}
	err := q.inChunks(turnIDs, func(chunk []string) error {
		var tid, sid, hkey, via string
		var vias viaDecoder
		var inherited, seq int64
		var m forkengine.Message
		targets := append([]any{&tid, &inherited, &sid, &hkey, &seq, &via}, messagesTable.targets(&m)...)
		args := turnSourcesArgs(q.dialect, ws, chunk, turnMessagesArgs(q.dialect, position, limit)...)
		err := scanEach(ctx, q, turnMessagesSQL(q.dialect, len(chunk), presentedCount(chunk), backward), args, targets, func() {
			if len(out[tid]) >= limit {
				return
			}
			got := m
			got.TurnID = tid
			if inherited == 1 {
				got = forkengine.PresentMessage(forkengine.History{WorkspaceID: ws, SessionID: sid, Key: hkey}, vias.decode(via), seq, got)
			}
			out[tid] = append(out[tid], got)
		})
		return classify(err, "message pages of %d turns", len(chunk))
	})
	return out, err
}

// spansCTE is the spans of n sessions a transcript page merges: each session's own rows (the
// highest ordinal, every sequence) and each of its history segments, with the owner and the
// range of sequences each one presents, and its stored Via. Arguments: spansArgs.
func spansCTE(d dialect, n int) string {
	return strings.TrimSuffix(idsCTE(d, n), " ") + `, spans (sid, ord, ows, owner, lo, hi, hkey, wm, via) AS (
	SELECT ids.id, 2147483647, CAST(? AS TEXT), ids.id, 0, 9223372036854775807, '', 9223372036854775807, '' FROM ids
	UNION ALL
	SELECT g.session_id, g.ordinal, g.owner_workspace_id, g.owner_session_id, g.from_sequence, g.to_sequence, g.history_key, g.watermark, g.via
	FROM ids ` + seekPerRow(d, "history_segments", "g", "g.workspace_id = ? AND g.session_id = ids.id") + `) `
}

func spansArgs(d dialect, ids []string, ws string, rest ...any) []any {
	return idArgs(d, ids, append([]any{ws, ws}, rest...)...)
}
