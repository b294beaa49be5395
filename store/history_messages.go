package store

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"

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

// turnMessagePagesSQL reads a page of each turn's messages, for stored ids of stored turns (a
// root's, a child's own) and runs runs of presented ids (presentedRuns), the turns
// messagesOfTurnsSQL reads whole, each stream cut to the page in SQL. A stream is a stored
// turn's messages, a run's segment owner's turn's up to the segment's watermark, or an adopted
// turn's (the child's rows under a presented id): a LATERAL read, ordered and limited, on
// PostgreSQL; on SQLite an index range of messages_by_turn between the cursor and the page's
// last position, which a correlated subquery finds walking the same index (once per stream: it
// is the range's bound). Every part selects messagesOfTurnsHead, then columns (whole messages or
// messageTextColumns; presentedMessageColumns in the inherited part). A page of inherited turns
// is read per run, not per turn: its History by key and its segments overlapping the run once,
// then each segment's owner's turns in the run (at depth 50 the per-turn read sought the
// segments twenty times, and read for each turn a stream of the presented id itself, empty
// unless adopted). Arguments: turnMessagePagesArgs.
func turnMessagePagesSQL(d dialect, columns string, stored, runs int, backward bool) string {
	k := turnMessagePagesKey{d.lateralJoins, columns, stored, runs, backward}
	if d.jsonIDLists {
		k.stored = min(stored, 1) // one JSON array, whatever its length
	}
	return cachedSQL(&turnMessagePagesStatements, k, func() string { return buildTurnMessagePagesSQL(d, columns, stored, runs, backward) })
}

// turnMessagePagesStatements remembers the statements turnMessagePagesSQL built (cachedSQL).
var turnMessagePagesStatements sync.Map

type turnMessagePagesKey struct {
	lateral      bool
	columns      string
	stored, runs int
	backward     bool
}

func buildTurnMessagePagesSQL(d dialect, cols string, stored, runs int, backward bool) string {
	ownHead, inheritedHead := messagesOfTurnsHead(cols)
	dir := ""
	if backward {
		dir = " DESC"
	}
	// stream is the messages m of turn, on ws, up to wm (empty: no watermark), cut to the page.
	stream := func(ws, turn, wm string) string {
		if d.lateralJoins {
			near := "m.position > CAST(? AS BIGINT)"
			if backward {
				near = "m.position < CAST(? AS BIGINT)"
			}
			if wm != "" {
				near += " AND m.position <= " + wm
			}
			return "CROSS JOIN LATERAL (SELECT * FROM messages m WHERE m.workspace_id = " + ws + " AND m.turn_id = " + turn + " AND " + near +
				" ORDER BY m.position" + dir + " LIMIT ?) m"
		}
		// SQLite: the range's two ends are one bound each (with two upper bounds, the cursor's or
		// the watermark's and the page's end, it ranged over one and filtered by the other, which
		// for the page's end was its subquery once per message instead of once per stream).
		// Forward: after the cursor, up to the page's last position or else the watermark (the
		// subquery stops there too). Backward: below the cursor and the watermark, down to the
		// page's last position or else the first.
		seek := "m.workspace_id = " + ws + " AND m.turn_id = " + turn
		walk := "x.workspace_id = " + ws + " AND x.turn_id = " + turn // the subquery's
		if !backward {
			end := "9223372036854775807"
			if wm != "" {
				end = wm
				walk += " AND x.position <= " + wm
			}
			return "CROSS JOIN messages m WHERE " + seek + " AND m.position > ? AND m.position <= COALESCE((SELECT x.position FROM messages x WHERE " +
				walk + " AND x.position > ? ORDER BY x.position LIMIT 1 OFFSET ?), " + end + ")"
		}
		below := "? - 1"
		if wm != "" {
			below = "MIN(? - 1, " + wm + ")"
		}
		return "CROSS JOIN messages m WHERE " + seek + " AND m.position <= " + below + " AND m.position >= COALESCE((SELECT x.position FROM messages x WHERE " +
			walk + " AND x.position <= " + below + " ORDER BY x.position DESC LIMIT 1 OFFSET ?), 0)"
	}
	var parts []string
	with := ""
	if stored > 0 {
		if d.jsonIDLists {
			parts = append(parts, "SELECT "+ownHead+cols+" FROM (SELECT value AS id FROM json_each(?)) s "+stream("?", "s.id", ""))
		} else {
			with = strings.TrimSuffix(idsCTE(d, stored), " ")
			parts = append(parts, "SELECT "+ownHead+cols+" FROM ids "+stream("?", "ids.id", ""))
		}
	}
	if runs > 0 {
		values := "(VALUES (CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT))" + strings.Repeat(", (?, ?, ?, ?)", runs-1) + ")"
		runsOf := "(SELECT column1 AS hkey, column2 AS lo, column3 AS hi, column4 AS ix FROM " + values + " v) runs"
		if d.lateralJoins {
			// One MATERIALIZED CTE, as messagesOfTurnsSQL's (its generic plan), its values first.
			cte := "runs (hkey, lo, hi, ix) AS MATERIALIZED " + values
			if with == "" {
				with = "WITH " + cte
			} else {
				with += ", " + cte
			}
			runsOf = "runs"
		}
		byKey := "h.workspace_id = ? AND h.history_key = runs.hkey"
		inRun := "t.sequence >= runs.lo AND t.sequence <= runs.hi AND t.sequence <= h.boundary"
		inherited := []joinStep{
			{"histories", "h", byKey + " AND runs.lo <= h.boundary"},
			{"history_segments", "g", "g.workspace_id = h.workspace_id AND g.session_id = h.session_id AND " +
				"g.from_sequence < runs.hi AND g.to_sequence >= runs.lo"},
			{"turns", "t", "t.workspace_id = g.owner_workspace_id AND t.session_id = g.owner_session_id AND " + inRun +
				" AND t.sequence > g.from_sequence AND t.sequence <= g.to_sequence"}}
		adopted := []joinStep{
			{"histories", "h", byKey + " AND h.inherited_turns < h.prefix_turns"},
			{"turns", "t", "t.workspace_id = h.workspace_id AND t.session_id = h.session_id AND " + inRun}}
		parts = append(parts,
			"SELECT "+inheritedHead+presentedMessageColumns(cols)+" "+chainThenStream(d, runsOf, inherited, stream("g.owner_workspace_id", "t.id", "g.watermark")),
			"SELECT "+ownHead+cols+" "+chainThenStream(d, runsOf, adopted, stream("t.workspace_id", "t.id", "")))
	}
	if with != "" {
		with += " "
	}
	return with + strings.Join(parts, "\n\tUNION ALL\n\t")
}

// chainThenStream is seekChain of first and steps, then the stream of messages (a LATERAL
// subquery on PostgreSQL; on SQLite the messages joined last, the stream's conditions after the
// steps').
func chainThenStream(d dialect, first string, steps []joinStep, stream string) string {
	chain := seekChain(d, first, steps...)
	if d.lateralJoins {
		return chain + " " + stream
	}
	head, where, _ := strings.Cut(stream, " WHERE ")
	return strings.Replace(chain, " WHERE ", " "+head+" WHERE ", 1) + " AND " + where
}

// turnMessagePagesArgs are the arguments of turnMessagePagesSQL: for stored the ids, then (on
// PostgreSQL) the runs' values, then each part's: the workspace, the cursor, the limit (on
// SQLite the cursor again and the limit less one, the subquery's offset), the runs' values first
// in each run part on SQLite.
func turnMessagePagesArgs(d dialect, ws string, stored []string, values []any, position int64, limit int) []any {
	runs := runValues(values)
	var args []any
	part := func(workspace bool) {
		if workspace {
			args = append(args, ws)
		}
		if d.lateralJoins {
			args = append(args, position, limit)
			return
		}
		args = append(args, position, position, limit-1)
	}
	if d.lateralJoins {
		if len(stored) > 0 {
			args = idArgs(d, stored)
		}
		args = append(args, runs...)
		if len(stored) > 0 {
			part(true)
		}
		if len(runs) > 0 {
			part(true)
			part(true)
		}
		return args
	}
	if len(stored) > 0 {
		args = append(args, idList(stored), ws, position)
		args = append(args, ws, position, limit-1)
	}
	if len(runs) > 0 {
		for range 2 {
			args = append(append(args, runs...), ws)
			part(false)
		}
	}
	return args
}

// TurnMessagesAfter returns per turn up to limit messages after afterPosition.
func (q queries) TurnMessagesAfter(ctx context.Context, ws string, turnIDs []string, afterPosition int64, limit int) (map[string][]forkengine.Message, error) {
	return q.turnMessagePages(ctx, ws, turnIDs, qualifiedMessagesOfWorkspace, wholeMessageTargets, afterPosition, limit, false)
}

// TurnMessagesBefore returns per turn up to limit messages before beforePosition (<= 0: from the
// last), nearest first.
func (q queries) TurnMessagesBefore(ctx context.Context, ws string, turnIDs []string, beforePosition int64, limit int) (map[string][]forkengine.Message, error) {
	if beforePosition <= 0 {
		beforePosition = forkengine.TranscriptEnd.Position
	}
	return q.turnMessagePages(ctx, ws, turnIDs, qualifiedMessagesOfWorkspace, wholeMessageTargets, beforePosition, limit, true)
}

// wholeMessageTargets are the scan targets of qualifiedMessagesOfWorkspace: every column but
// workspace_id.
func wholeMessageTargets(m *forkengine.Message) []any { return messagesTable.targets(m)[1:] }

// turnMessagePages reads turnMessagePagesSQL of columns into targets of one message: per turn up
// to limit messages from position on, in position order (descending when backward). Whole
// messages are presented when inherited (wholeMessages); narrower ones get the presented turn, and
// their Position is left zero as their columns do.
func (q queries) turnMessagePages(ctx context.Context, ws string, turnIDs []string, columns string, targetsOf func(*forkengine.Message) []any,
	position int64, limit int, backward bool,
) (map[string][]forkengine.Message, error) {
	limit = max(limit, 1)
	full := wholeMessages(columns)
	out := map[string][]forkengine.Message{}
	err := q.inChunks(turnIDs, func(chunk []string) error {
		stored, values := presentedRuns(chunk)
		keys := make([]string, len(values)/3) // by the run index each inherited row selects
		for i := range keys {
			keys[i] = values[3*i].(string)
		}
		var via, turnID string
		var vias viaDecoder
		var ix, seq, at int64
		lastRun, lastSeq := int64(-1), int64(0)
		m := forkengine.Message{WorkspaceID: ws}
		targets := append([]any{&ix, &seq, &via}, targetsOf(&m)...) // messagesOfTurnsHead, then the columns
		if !full {
			targets[2] = &at
		}
		var unordered map[string]bool // turns whose streams arrived interleaved
		err := scanEach(ctx, q, turnMessagePagesSQL(q.dialect, columns, len(stored), len(keys), backward),
			turnMessagePagesArgs(q.dialect, ws, stored, values, position, limit), targets, func() {
				got := m
				if !full {
					got.Position = at // for the order below, zeroed after it
				}
				if ix >= 0 {
					if ix != lastRun || seq != lastSeq || turnID == "" {
						turnID, lastRun, lastSeq = forkengine.PresentedTurnID(keys[ix], seq), ix, seq // once per turn, not per message
					}
					if full {
						// got.SessionID is the child's (presentedMessageColumns).
						got = forkengine.PresentMessageOfTurn(forkengine.History{WorkspaceID: ws, SessionID: got.SessionID, Key: keys[ix]}, vias.decode(via), turnID, seq, got)
					} else {
						got.TurnID = turnID
					}
				}
				list := out[got.TurnID]
				if n := len(list); n > 0 && (got.Position > list[n-1].Position) == backward {
					if unordered == nil {
						unordered = map[string]bool{}
					}
					unordered[got.TurnID] = true
				}
				out[got.TurnID] = append(list, got)
			})
		if err != nil {
			return classify(err, "message pages of %d turns", len(chunk))
		}
		// A turn shown by several streams (segments over one sequence, an adopted turn) has each
		// one's page: merged in position order, the page is the first limit of them.
		for tid := range unordered {
			slices.SortFunc(out[tid], func(a, b forkengine.Message) int {
				if backward {
					return cmp.Compare(b.Position, a.Position)
				}
				return cmp.Compare(a.Position, b.Position)
			})
		}
		for _, id := range chunk {
			list := out[id]
			if len(list) > limit {
				list = list[:limit]
				out[id] = list
			}
			if !full {
				for i := range list {
					list[i].Position = 0
				}
			}
		}
		return nil
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
