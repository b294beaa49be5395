package store

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"sync"

	"gorm.io/gorm"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Shared history (docs/design/shared-history.md §5): a committed fork's History is one row of
// histories and its segments rows of history_segments. A per-session turn read is one statement
// of the session's own rows and the segments overlapping the page (history_turns.go), merged in
// Go; a read of messages by turn reads the inherited turns of a page by runs of sequences
// (messagesOfTurnsSQL). An inherited row is turned into the child's view in one place,
// forkengine.PresentTurn and PresentMessage.

// historiesTable and segmentsTable describe the two tables (table.go).
var historiesTable = newTable("histories", []string{"workspace_id", "session_id"},
	textColumn("workspace_id", func(h *forkengine.History) *string { return &h.WorkspaceID }),
	textColumn("session_id", func(h *forkengine.History) *string { return &h.SessionID }),
	textColumn("history_key", func(h *forkengine.History) *string { return &h.Key }),
	integerColumn("boundary", func(h *forkengine.History) *int64 { return &h.Boundary }),
	intColumn("prefix_turns", func(h *forkengine.History) *int { return &h.PrefixTurns }),
	intColumn("inherited_turns", func(h *forkengine.History) *int { return &h.InheritedTurns }),
	integerColumn("audit_bound", func(h *forkengine.History) *int64 { return &h.AuditBound }),
)

// segmentRow is one stored segment: the History it belongs to, its place in it, the segment.
type segmentRow struct {
	WorkspaceID, SessionID, Key string
	Ordinal                     int64
	forkengine.HistorySegment
	// via is HistorySegment.Via as stored (encodeVia).
	via string
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
	textColumn("via", func(s *segmentRow) *string { return &s.via }),
)

// typedReferencesMigration (migration 26) stores each segment's Via: the segments of forks
// committed before it read as an empty one, which is how their readers present them. And it
// indexes the messages with typed parts by turn, which a fork's prepare reads to check their
// references (TypedMessagesByTurnIDs): a plain message has no entry, so the check of a plain
// transcript is an empty index range.
var typedReferencesMigration = migration{version: 26, name: "typed references: segment vias, typed messages by turn", statements: []string{
	`ALTER TABLE history_segments ADD COLUMN via TEXT NOT NULL DEFAULT ''`,
	`CREATE INDEX messages_typed_by_turn ON messages (workspace_id, turn_id, position) WHERE ` + typedMessage,
}}

// typedMessage is the condition a message with typed parts meets, spelled as the partial index
// messages_typed_by_turn is, so both planners see the index applies.
const typedMessage = "parts <> ''"

// encodeVia is a segment's Via as stored: its history keys joined by dots (a key is base64url,
// which has none); decodeVia reverses it.
func encodeVia(via []string) string { return strings.Join(via, ".") }

func decodeVia(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ".")
}

// viaIfTyped is what a read of inherited messages selects for a segment's Via (the column via)
// beside a message m: the Via only where the message has typed parts, the one place it is used
// (forkengine.PresentMessage remaps their references). Fifty forks deep a Via is fifty keys, 650
// bytes; copied out of the database and split for each plain message of a page it cost the deep
// page's messages a third of their CPU.
func viaIfTyped(via string) string {
	return "CASE WHEN m." + typedMessage + " THEN " + via + " ELSE '' END"
}

// viaDecoder decodes the Vias of one read's rows, each distinct one once (a page's messages
// mostly come through one segment).
type viaDecoder struct {
	last    string
	decoded []string
}

func (v *viaDecoder) decode(s string) []string {
	if s != v.last || (s != "" && v.decoded == nil) {
		v.last, v.decoded = s, decodeVia(s)
	}
	return v.decoded
}

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
		func(s *segmentRow) {
			g := s.HistorySegment
			g.Via = decodeVia(s.via)
			h.Segments = append(h.Segments, g)
		})
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
		rows[i] = segmentRow{WorkspaceID: h.WorkspaceID, SessionID: h.SessionID, Key: h.Key, Ordinal: int64(i), HistorySegment: s,
			via: encodeVia(s.Via)}
	}
	return tx.guarded(ctx, func(db *gorm.DB) error {
		// A count the snapshot carried (0 too) is stored with the row; without one the commit counts the
		// segments' messages (countInheritedMessagesSQL, a sum over every turn they cover).
		insert, values := insertSQL("histories", historiesTable.names, 1), historiesTable.values(&h)
		if h.MessagesCounted {
			insert, values = insertCountedHistorySQL, append(values, h.InheritedMessages)
		}
		if _, err := tx.execFixed(db, insert, values...); err != nil {
			return classify(err, "insert history of %s", h.SessionID)
		}
		if err := insertRows(tx.execWith(db), segmentsTable, rows, false); err != nil {
			return classify(err, "insert %d segments of %s", len(rows), h.SessionID)
		}
		if h.MessagesCounted {
			return nil
		}
		return tx.countInheritedMessages(db, h.WorkspaceID, h.SessionID)
	})
}

// insertCountedHistorySQL inserts a History with the inherited messages its snapshot counted.
// (insertSQL's cache is keyed by table and rows, so this one is built here.)
var insertCountedHistorySQL = "INSERT INTO " + historiesTable.name + " (" + historiesTable.list("") + ", inherited_messages) VALUES " +
	placeholders(len(historiesTable.names)+1)

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

// messagesOfTurnsSQL reads the messages of turns: in (inList) the ids of stored turns, read as
// they always were, in (turn, position) order; runs the presented ids of inherited turns, each
// run (key, lo, hi) standing for the presented ids of one history key with the consecutive
// sequences lo…hi (a page of turns is one run). A run is read per run, not per turn, in two
// more parts joined by UNION ALL: the History found by key, then its segments overlapping the
// run, sought once (at fifty segments deep, a seek per turn of a page of twenty visited a
// thousand segment rows), each such segment's owner turns in the run and their messages up to
// the segment's watermark; and, when the History says the child holds rows of its own for some
// inherited turns (an adopted turn, adoptInheritedTurns), the child's rows in the run and their
// messages. A turn presented by several segments gets the messages of each. A root's turns, and
// a child's own turns above its boundary, are never presented ids, so their read is the first
// part alone; a page wholly inherited is the run parts alone, with no probe per presented id of
// the messages the child stored under it (there are none unless it adopted the turn). With
// runs every part selects messagesOfTurnsHead, then columns (presentedMessageColumns in the
// inherited part); without runs, the columns alone. typedOnly keeps the messages with typed
// parts alone (typedMessage). Arguments: the workspace and the ids (inList) when in is not empty, then for
// each run part the runs' values and the workspace.
func messagesOfTurnsSQL(d dialect, in string, runs int, columns string, typedOnly bool) string {
	return cachedSQL(&messagesOfTurnsStatements, messagesOfTurnsKey{d.lateralJoins, in, runs, columns, typedOnly},
		func() string { return buildMessagesOfTurnsSQL(d, in, runs, columns, typedOnly) })
}

// messagesOfTurnsStatements remembers the statements messagesOfTurnsSQL built (cachedSQL).
var messagesOfTurnsStatements sync.Map

type messagesOfTurnsKey struct {
	lateral   bool
	in        string
	runs      int
	columns   string
	typedOnly bool
}

func buildMessagesOfTurnsSQL(d dialect, in string, runs int, columns string, typedOnly bool) string {
	typed := ""
	if typedOnly {
		typed = " AND m." + typedMessage
	}
	if runs == 0 {
		// Stored turns only (a root's always): the read as it was before shared history, the
		// columns alone, with nothing to tell apart.
		return "SELECT " + columns + " FROM messages m WHERE m.workspace_id = ? AND m.turn_id IN " + in + typed + " ORDER BY m.turn_id, m.position"
	}
	ownHead, inheritedHead := messagesOfTurnsHead(columns)
	own := ""
	if in != "" {
		own = "SELECT " + ownHead + columns +
			" FROM messages m WHERE m.workspace_id = ? AND m.turn_id IN " + in + typed
	}
	if own != "" {
		own += "\n\tUNION ALL\n\t"
	}
	// On SQLite the runs are a subquery of each part, not a CTE: SQLite materialises a CTE that
	// two parts name, a temporary table built for every statement, which cost more than the read.
	// Each run carries its index in the runs (messagesOfTurnsArgs adds it), which the inherited
	// part selects for the run's key: the caller knows the keys, and an integer is not a string
	// the driver copies out for every message.
	values := "(VALUES (CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT))" + strings.Repeat(", (?, ?, ?, ?)", runs-1) + ")"
	runsOf, with := "(SELECT column1 AS hkey, column2 AS lo, column3 AS hi, column4 AS ix FROM "+values+" v) runs", ""
	if d.lateralJoins {
		// PostgreSQL: one MATERIALIZED CTE that hides the runs' values from the planner, so that
		// the custom plans of the prepared statement cost what its generic plan does and the
		// server switches to the generic plan after its five custom ones. With the values in
		// sight a page inside one segment's range was estimated cheaper custom (662) than generic
		// (1,032): it was planned again on every run, 0.4-1.7 ms of planning for 0.15 ms of
		// execution. The plan is the same (the LATERAL joins fix its order and its seeks).
		// Arguments: the runs' values first, once (messagesOfTurnsArgs).
		with, runsOf = "WITH runs (hkey, lo, hi, ix) AS MATERIALIZED "+values+" ", "runs"
	}
	byKey := "h.workspace_id = ? AND h.history_key = runs.hkey"
	inRun := "t.sequence >= runs.lo AND t.sequence <= runs.hi AND t.sequence <= h.boundary"
	inherited := seekChain(d, runsOf,
		joinStep{"histories", "h", byKey + " AND runs.lo <= h.boundary"},
		joinStep{"history_segments", "g", "g.workspace_id = h.workspace_id AND g.session_id = h.session_id AND " +
			"g.from_sequence < runs.hi AND g.to_sequence >= runs.lo"},
		joinStep{"turns", "t", "t.workspace_id = g.owner_workspace_id AND t.session_id = g.owner_session_id AND " + inRun +
			" AND t.sequence > g.from_sequence AND t.sequence <= g.to_sequence"},
		joinStep{"messages", "m", "m.workspace_id = g.owner_workspace_id AND m.turn_id = t.id AND m.position <= g.watermark" + typed})
	adopted := seekChain(d, runsOf,
		joinStep{"histories", "h", byKey + " AND h.inherited_turns < h.prefix_turns"},
		joinStep{"turns", "t", "t.workspace_id = h.workspace_id AND t.session_id = h.session_id AND " + inRun},
		joinStep{"messages", "m", "m.workspace_id = t.workspace_id AND m.turn_id = t.id" + typed})
	return with + own + "SELECT " + inheritedHead + presentedMessageColumns(columns) + " " + inherited +
		"\n\tUNION ALL\n\tSELECT " + ownHead + columns + " " + adopted
}

// wholeMessageColumns begin the columns of a read of whole messages (qualifiedMessagesOfWorkspace);
// a narrower read (messageTextColumns) begins with the turn alone.
const wholeMessageColumns = "m.id, m.session_id, m.turn_id, "

// wholeMessages reports whether columns read whole messages, which are presented when inherited.
func wholeMessages(columns string) bool { return strings.HasPrefix(columns, wholeMessageColumns) }

// messagesOfTurnsHead is what each part of messagesOfTurnsSQL with runs selects before its
// columns: the index of the run whose key presents the row (-1: a stored row, of a turn read by
// id or adopted), the turn's sequence, and for whole messages the segment's stored Via (what
// PresentMessageOfTurn remaps a typed message's references through), else the message's
// position, which the narrower columns lack. A stored row's turn and session are its columns'.
// (The head used to carry the turn id, the position again, an inherited flag and the session
// beside the columns: fifteen columns an inherited message where a root's read has eight; now
// eleven.)
func messagesOfTurnsHead(columns string) (own, inherited string) {
	if wholeMessages(columns) {
		return "-1, 0, '', ", "runs.ix, t.sequence, " + viaIfTyped("g.via") + ", "
	}
	return "-1, 0, m.position, ", "runs.ix, t.sequence, m.position, "
}

// presentedMessageColumns is columns as the inherited part of messagesOfTurnsSQL selects them:
// the owner's id and turn of a message are empty, since forkengine.PresentMessageOfTurn replaces
// both with the child's, and the session is the child's, which the History found by the run's
// key names (each owner's string was one the driver copied out per row for nothing).
func presentedMessageColumns(columns string) string {
	if rest, ok := strings.CutPrefix(columns, wholeMessageColumns); ok {
		return "'', h.session_id, '', " + rest
	}
	if rest, ok := strings.CutPrefix(columns, "m.turn_id, "); ok {
		return "'', " + rest
	}
	return columns
}

// joinStep is one table of a seekChain: its alias and the condition that seeks it.
type joinStep struct{ table, alias, cond string }

// seekChain is "FROM first" joined to each step in the order given, each sought once per row
// before it (seekPerRow): SQLite keeps the CROSS JOINs in order, PostgreSQL is held to it by
// LATERAL subqueries (on tables it has never analysed it would read the messages of a whole
// workspace first: 60 ms for a page of twenty turns).
func seekChain(d dialect, first string, steps ...joinStep) string {
	out := "FROM " + first
	var conds []string
	for _, s := range steps {
		if d.lateralJoins {
			out += " CROSS JOIN LATERAL (SELECT * FROM " + s.table + " " + s.alias + " WHERE " + s.cond + " OFFSET 0) " + s.alias
			continue
		}
		out += " CROSS JOIN " + s.table + " " + s.alias
		conds = append(conds, s.cond)
	}
	if len(conds) == 0 {
		return out
	}
	return out + " WHERE " + strings.Join(conds, " AND ")
}

// presentedRuns splits ids into the stored turns' ids and the presented ids of inherited turns,
// these as runs of one key and consecutive sequences (messagesOfTurnsSQL): the values (key, lo,
// hi) of each.
func presentedRuns(ids []string) (stored []string, runs []any) {
	type presented struct {
		key string
		seq int64
	}
	var all []presented
	for _, id := range ids {
		if key, seq, ok := forkengine.ParsePresentedTurnID(id); ok {
			all = append(all, presented{key, seq})
		} else {
			stored = append(stored, id)
		}
	}
	if len(all) == 0 {
		return ids, nil
	}
	slices.SortFunc(all, func(a, b presented) int {
		return cmp.Or(strings.Compare(a.key, b.key), cmp.Compare(a.seq, b.seq))
	})
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].key == all[i].key && all[j].seq <= all[j-1].seq+1 {
			j++
		}
		runs = append(runs, all[i].key, all[i].seq, all[j-1].seq)
		i = j
	}
	return stored, runs
}

// messagesOfTurns reads turnIDs' messages (messagesOfTurnsSQL) into targets of one message m and
// groups them by turn in Position order. The columns begin with the message's turn; whole
// messages (wholeMessages) are presented when inherited, narrower ones get the presented turn.
func (q queries) messagesOfTurns(ctx context.Context, ws string, turnIDs []string, columns string,
	targets func(*forkengine.Message) []any, typedOnly bool,
) (map[string][]forkengine.Message, error) {
	full := wholeMessages(columns)
	out := make(map[string][]forkengine.Message, len(turnIDs))
	err := q.inChunks(turnIDs, func(chunk []string) error {
		stored, values := presentedRuns(chunk)
		runs := len(values) / 3
		var in string
		var args []any
		if len(stored) > 0 {
			in, args = q.inList(stored, ws)
		}
		args = messagesOfTurnsArgs(q.dialect, args, values, ws)
		keys := make([]string, runs) // by the run index each inherited row selects
		for i := range keys {
			keys[i] = values[3*i].(string)
		}
		var via, turnID string
		var vias viaDecoder
		var position, seq, ix int64
		m := forkengine.Message{WorkspaceID: ws}
		all := make([]forkengine.Message, 0, 2*len(chunk))
		if runs == 0 {
			err := scanEach(ctx, q, messagesOfTurnsSQL(q.dialect, in, 0, columns, typedOnly), args, targets(&m), func() { all = append(all, m) })
			if err != nil {
				return classify(err, "messages by turns")
			}
			groupMessages(all, out)
			return nil
		}
		head := []any{&ix, &seq, &via} // messagesOfTurnsHead
		if !full {
			head[2] = &position
		}
		var positions []int64 // of all's messages, for the order of the parts
		// grouped: every row so far is inherited, in (key, sequence, position) order, so each
		// turn's messages are already one run in position order (a page inside the segments, the
		// usual read, comes so from the seeks) and need no sort.
		grouped, lastRun, lastSeq, lastPos := true, int64(-1), int64(0), int64(0)
		err := scanEach(ctx, q, messagesOfTurnsSQL(q.dialect, in, runs, columns, typedOnly), args, append(head, targets(&m)...), func() {
			got := m
			if full {
				position = got.Position
			}
			inherited := ix >= 0
			if grouped {
				// Runs have distinct keys or disjoint sequences, so rows in (run, sequence,
				// position) order are grouped by turn.
				grouped = inherited && (ix > lastRun || ix == lastRun && (seq > lastSeq || seq == lastSeq && position > lastPos))
			}
			if inherited {
				key := keys[ix]
				if ix != lastRun || seq != lastSeq || turnID == "" {
					turnID = forkengine.PresentedTurnID(key, seq) // once per turn, not per message
				}
				if full {
					// got.SessionID is the child's (presentedMessageColumns).
					got = forkengine.PresentMessageOfTurn(forkengine.History{WorkspaceID: ws, SessionID: got.SessionID, Key: key}, vias.decode(via), turnID, seq, got)
				} else {
					got.TurnID = turnID
				}
				lastRun, lastSeq, lastPos = ix, seq, position
			}
			all = append(all, got)
			positions = append(positions, position)
		})
		if err != nil {
			return classify(err, "messages by turns")
		}
		if !grouped {
			all = byTurnAndPosition(all, positions)
		}
		groupMessages(all, out)
		return nil
	})
	return out, err
}

// messagesOfTurnsArgs are the arguments of messagesOfTurnsSQL: inArgs (the workspace and the
// stored ids, when there are any) and, for runs, their values (presentedRuns) and the workspace of
// each run part. On PostgreSQL the values come first, once, for the CTE that holds them.
func messagesOfTurnsArgs(d dialect, inArgs, values []any, ws string) []any {
	if len(values) == 0 {
		return inArgs
	}
	runs := runValues(values)
	if d.lateralJoins {
		return append(append(append(make([]any, 0, len(runs)+len(inArgs)+2), runs...), inArgs...), ws, ws)
	}
	args := inArgs
	for range 2 {
		args = append(append(args, runs...), ws)
	}
	return args
}

// runValues are the values of presentedRuns' runs as the statements bind them: each run's key,
// lo and hi, and its index.
func runValues(values []any) []any {
	runs := make([]any, 0, len(values)/3*4)
	for i := 0; i+2 < len(values); i += 3 {
		runs = append(runs, values[i], values[i+1], values[i+2], i/3)
	}
	return runs
}

// groupMessages puts msgs, in turn order, into out by turn, each turn's one run of msgs.
func groupMessages(msgs []forkengine.Message, out map[string][]forkengine.Message) {
	for start, i := 0, 1; i <= len(msgs); i++ {
		if i == len(msgs) || msgs[i].TurnID != msgs[start].TurnID {
			out[msgs[start].TurnID] = msgs[start:i:i] // capped: an append by the caller copies
			start = i
		}
	}
}

// byTurnAndPosition orders the messages of a read with runs, whose parts come in no order of
// their own: by turn, then by position (of positions, which a partial read does not set on the
// messages), so an adopted turn's own messages fall among its inherited ones (positions are the
// workspace's one clock).
func byTurnAndPosition(msgs []forkengine.Message, positions []int64) []forkengine.Message {
	order := make([]int, len(msgs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(strings.Compare(msgs[a].TurnID, msgs[b].TurnID), cmp.Compare(positions[a], positions[b]))
	})
	out := make([]forkengine.Message, len(msgs))
	for i, k := range order {
		out[i] = msgs[k]
	}
	return out
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
	resolved AS (SELECT want.id, want.seq, want.pos, g.session_id, g.history_key, g.owner_workspace_id, g.owner_session_id, g.via
		FROM want ` + seekPerRow(q.dialect, "history_segments", "g", "g.workspace_id = ? AND g.history_key = want.hkey "+
		"AND g.from_sequence < want.seq AND g.to_sequence >= want.seq AND want.pos <= g.watermark") + `)
	SELECT r.id, r.session_id, r.history_key, r.seq, r.via, ` + messagesTable.list("m.") + ` FROM resolved r CROSS JOIN turns t CROSS JOIN messages m
	WHERE t.workspace_id = r.owner_workspace_id AND t.session_id = r.owner_session_id AND t.sequence = r.seq
	AND m.workspace_id = r.owner_workspace_id AND m.turn_id = t.id AND m.position = r.pos`
	var id, sid, hkey, via string
	var seq int64
	var m forkengine.Message
	targets := append([]any{&id, &sid, &hkey, &seq, &via}, messagesTable.targets(&m)...)
	err := scanEach(ctx, q, query, append(args, ws), targets, func() {
		out[id] = forkengine.PresentMessage(forkengine.History{WorkspaceID: ws, SessionID: sid, Key: hkey}, decodeVia(via), seq, m)
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
			// The triggers moved the counts with the messages; the emptied rows go with the turns.
			_, err := tx.execFixed(db, `DELETE FROM message_counts WHERE workspace_id = ?
				AND turn_id IN (SELECT t.id FROM turns t WHERE t.workspace_id = ? AND t.session_id = ?)`, ws, ws, id)
			return err
		},
		func() error {
			_, err := tx.execFixed(db, "UPDATE audit_messages SET workspace_id = ? WHERE workspace_id = ? AND session_id = ?", tomb, ws, id)
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
	for _, t := range []string{"messages", "message_counts", "audit_messages", "turns", "turn_counts", "sessions", "session_counts"} {
		if _, err := tx.execFixed(tx.with(ctx), "DELETE FROM "+t+" WHERE workspace_id = ?", tomb); err != nil {
			return classify(err, "free the shared rows of %s", tomb)
		}
	}
	return nil
}
