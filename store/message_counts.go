package store

import (
	"context"

	"gorm.io/gorm"
)

// A transcript's totalCount (Session.messagesConnection) counted, span by span, every message
// of the session and of each segment of its History: fifty forks deep, a walk of the whole
// chain's index entries for one number. Instead the writes keep the counts, as turn_counts does
// for turns (turn_counts.go), so a count is primary-key probes whatever the depth:
//
//   - message_counts: per turn, its messages and the highest position among them. Triggers on
//     messages change it in the statement that inserts, deletes or moves a message. The highest
//     position is only ever raised (a delete leaves it), so it is at least the real one: a turn
//     whose highest position is at or below a segment's watermark shows all n of its messages
//     through that segment, and only a turn appended to after the watermark is counted row by
//     row (the messages above it are not the child's).
//   - turn_counts.messages: per session, the messages stored under its own turns (adopted ones
//     included), kept by the same triggers.
//   - histories.inherited_messages: the messages a fork inherits, the sum over its segments,
//     computed once when its History is inserted (InsertHistory) and never changed after: the
//     rows a segment reads cannot change (docs/design/shared-history.md §3), and a purge moves
//     them without changing their number.
//
// A transcript's count is then turn_counts.messages + histories.inherited_messages, and a turn's
// the message_counts of each stream it shows (turnSourcesCTE).

// messageCountsMigration (migration 27) creates the counts, fills them from the rows stored, and
// indexes the segments by range, which is what every read of a page seeks them by.
var messageCountsMigration = migration{version: 27, name: "message counts for totalCount; segments by range", statements: []string{
	`CREATE TABLE message_counts (
		workspace_id  TEXT   NOT NULL,
		turn_id       TEXT   NOT NULL,
		n             BIGINT NOT NULL,
		last_position BIGINT NOT NULL,
		PRIMARY KEY (workspace_id, turn_id)
	)`,
	`ALTER TABLE turn_counts ADD COLUMN messages BIGINT NOT NULL DEFAULT 0`,
	`ALTER TABLE histories ADD COLUMN inherited_messages BIGINT NOT NULL DEFAULT 0`,
	// A page seeks the segments overlapping its window: from_sequence bounds the range of the
	// index and to_sequence is checked in it, so a segment outside the window costs an index entry
	// read in order, not a seek of its row (the primary key read all fifty rows of a chain).
	`CREATE INDEX history_segments_by_range ON history_segments (workspace_id, session_id, from_sequence, to_sequence)`,
	`INSERT INTO message_counts (workspace_id, turn_id, n, last_position)
		SELECT workspace_id, turn_id, COUNT(*), MAX(position) FROM messages GROUP BY workspace_id, turn_id`,
	`UPDATE turn_counts SET messages = (SELECT COALESCE(SUM(c.n), 0) FROM turns t JOIN message_counts c
		ON c.workspace_id = t.workspace_id AND c.turn_id = t.id
		WHERE t.workspace_id = turn_counts.workspace_id AND t.session_id = turn_counts.session_id)`,
	`UPDATE histories SET inherited_messages = ` + inheritedMessagesOf("histories"),
}, perDialect: map[string][]string{
	DriverSQLite:   sqliteMessageCountTriggers,
	DriverPostgres: postgresMessageCountTriggers,
}}

// inheritedMessagesOf is the number of messages the History of row h inherits: per segment,
// per owner turn in its range, the turn's count when its highest position is within the
// watermark, else its messages up to the watermark counted.
func inheritedMessagesOf(h string) string {
	return `(SELECT COALESCE(SUM(CASE WHEN c.last_position <= g.watermark THEN c.n ELSE (
		SELECT COUNT(*) FROM messages m WHERE m.workspace_id = g.owner_workspace_id AND m.turn_id = t.id AND m.position <= g.watermark) END), 0)
	FROM history_segments g
	JOIN turns t ON t.workspace_id = g.owner_workspace_id AND t.session_id = g.owner_session_id
		AND t.sequence > g.from_sequence AND t.sequence <= g.to_sequence
	JOIN message_counts c ON c.workspace_id = t.workspace_id AND c.turn_id = t.id
	WHERE g.workspace_id = ` + h + `.workspace_id AND g.session_id = ` + h + `.session_id)`
}

// countInheritedMessagesSQL sets a new History's inherited_messages. Arguments: its workspace
// and session.
var countInheritedMessagesSQL = `UPDATE histories SET inherited_messages = ` + inheritedMessagesOf("histories") +
	` WHERE workspace_id = ? AND session_id = ?`

// countInheritedMessages runs countInheritedMessagesSQL for the History just inserted.
func (tx *txn) countInheritedMessages(db *gorm.DB, ws, sessionID string) error {
	_, err := tx.execFixed(db, countInheritedMessagesSQL, ws, sessionID)
	return classify(err, "count the inherited messages of %s", sessionID)
}

// messageMovedSQL: an update that moves a message to another turn, session or workspace (a purge
// moves a still-read owner's messages to its tombstone workspace).
const messageMovedSQL = "OLD.workspace_id <> NEW.workspace_id OR OLD.turn_id <> NEW.turn_id OR OLD.session_id <> NEW.session_id"

// sqliteMessageBumpSQL adds delta to the counts of the turn and session of row (NEW or OLD).
func sqliteMessageBumpSQL(row, delta string) string {
	return "INSERT INTO message_counts (workspace_id, turn_id, n, last_position) VALUES (" + row + ".workspace_id, " + row + ".turn_id, " +
		delta + ", " + row + ".position) ON CONFLICT (workspace_id, turn_id) DO UPDATE SET n = message_counts.n + excluded.n, " +
		"last_position = MAX(message_counts.last_position, excluded.last_position);\n" +
		"INSERT INTO turn_counts (workspace_id, session_id, n, messages) VALUES (" + row + ".workspace_id, " + row + ".session_id, 0, " +
		delta + ") ON CONFLICT (workspace_id, session_id) DO UPDATE SET messages = turn_counts.messages + excluded.messages;"
}

var sqliteMessageCountTriggers = []string{
	"CREATE TRIGGER messages_counted_insert AFTER INSERT ON messages BEGIN " + sqliteMessageBumpSQL("NEW", "1") + " END",
	"CREATE TRIGGER messages_counted_delete AFTER DELETE ON messages BEGIN " + sqliteMessageBumpSQL("OLD", "-1") + " END",
	"CREATE TRIGGER messages_counted_update AFTER UPDATE OF workspace_id, turn_id, session_id ON messages WHEN " + messageMovedSQL +
		" BEGIN " + sqliteMessageBumpSQL("OLD", "-1") + "\n" + sqliteMessageBumpSQL("NEW", "1") + " END",
}

// On PostgreSQL inserts and deletes are counted per statement from the transition table: an
// append of fifty messages to one turn is one upsert of each count, not fifty.
var postgresMessageCountTriggers = []string{
	`CREATE OR REPLACE FUNCTION forkgraph_count_messages() RETURNS trigger AS $$
	DECLARE sign BIGINT := CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END;
	BEGIN
		INSERT INTO message_counts (workspace_id, turn_id, n, last_position)
		SELECT workspace_id, turn_id, sign * COUNT(*), MAX(position) FROM counted_messages GROUP BY workspace_id, turn_id
		ON CONFLICT (workspace_id, turn_id) DO UPDATE SET n = message_counts.n + excluded.n,
			last_position = GREATEST(message_counts.last_position, excluded.last_position);
		INSERT INTO turn_counts (workspace_id, session_id, n, messages)
		SELECT workspace_id, session_id, 0, sign * COUNT(*) FROM counted_messages GROUP BY workspace_id, session_id
		ON CONFLICT (workspace_id, session_id) DO UPDATE SET messages = turn_counts.messages + excluded.messages;
		RETURN NULL;
	END $$ LANGUAGE plpgsql`,
	`CREATE TRIGGER messages_counted_insert AFTER INSERT ON messages REFERENCING NEW TABLE AS counted_messages
		FOR EACH STATEMENT EXECUTE FUNCTION forkgraph_count_messages()`,
	`CREATE TRIGGER messages_counted_delete AFTER DELETE ON messages REFERENCING OLD TABLE AS counted_messages
		FOR EACH STATEMENT EXECUTE FUNCTION forkgraph_count_messages()`,
	`CREATE OR REPLACE FUNCTION forkgraph_move_message_count() RETURNS trigger AS $$
	BEGIN
		INSERT INTO message_counts (workspace_id, turn_id, n, last_position) VALUES (OLD.workspace_id, OLD.turn_id, -1, OLD.position)
		ON CONFLICT (workspace_id, turn_id) DO UPDATE SET n = message_counts.n + excluded.n;
		INSERT INTO message_counts (workspace_id, turn_id, n, last_position) VALUES (NEW.workspace_id, NEW.turn_id, 1, NEW.position)
		ON CONFLICT (workspace_id, turn_id) DO UPDATE SET n = message_counts.n + excluded.n,
			last_position = GREATEST(message_counts.last_position, excluded.last_position);
		INSERT INTO turn_counts (workspace_id, session_id, n, messages) VALUES (OLD.workspace_id, OLD.session_id, 0, -1)
		ON CONFLICT (workspace_id, session_id) DO UPDATE SET messages = turn_counts.messages + excluded.messages;
		INSERT INTO turn_counts (workspace_id, session_id, n, messages) VALUES (NEW.workspace_id, NEW.session_id, 0, 1)
		ON CONFLICT (workspace_id, session_id) DO UPDATE SET messages = turn_counts.messages + excluded.messages;
		RETURN NULL;
	END $$ LANGUAGE plpgsql`,
	`CREATE TRIGGER messages_counted_update AFTER UPDATE OF workspace_id, turn_id, session_id ON messages FOR EACH ROW
		WHEN (` + messageMovedSQL + `) EXECUTE FUNCTION forkgraph_move_message_count()`,
}

// purgeMessageCountsSQL removes a purged session's per-turn count rows; it runs before its turns
// are deleted.
const purgeMessageCountsSQL = `DELETE FROM message_counts WHERE workspace_id = @ws
	AND turn_id IN (SELECT t.id FROM turns t WHERE t.workspace_id = @ws AND t.session_id = @id)`

// countSessionMessagesSQL reads the transcript counts of n sessions: the messages of its own
// turns plus those its History inherits, two primary-key probes per id. Arguments: the ids, then
// the workspace twice.
func countSessionMessagesSQL(d dialect, n int) string {
	return idsCTE(d, n) + `SELECT ids.id, COALESCE((SELECT c.messages FROM turn_counts c WHERE c.workspace_id = ? AND c.session_id = ids.id), 0)
	+ COALESCE((SELECT h.inherited_messages FROM histories h WHERE h.workspace_id = ? AND h.session_id = ids.id), 0) FROM ids`
}

// CountSessionMessages counts each session's transcript, inherited messages included: from the
// counts the writes keep, whatever the transcript's length or the fork's depth.
func (q queries) CountSessionMessages(ctx context.Context, ws string, sessionIDs []string) (map[string]int, error) {
	out := map[string]int{}
	err := q.inChunks(sessionIDs, func(chunk []string) error {
		var sid string
		var n int64
		err := scanEach(ctx, q, countSessionMessagesSQL(q.dialect, len(chunk)), idArgs(q.dialect, chunk, ws, ws),
			[]any{&sid, &n}, func() {
				if n > 0 {
					out[sid] = int(n)
				}
			})
		return classify(err, "transcript counts of %d sessions", len(chunk))
	})
	return out, err
}

// CountTurnMessages counts each turn's messages, inherited ones included: per stream the turn
// shows (turnSourcesCTE), its turn's count, or where that turn was appended to above the
// stream's watermark, its messages up to it.
func (q queries) CountTurnMessages(ctx context.Context, ws string, turnIDs []string) (map[string]int, error) {
	out := map[string]int{}
	err := q.inChunks(turnIDs, func(chunk []string) error {
		count := "SELECT msrc.tid, CAST(SUM(CASE WHEN c.last_position <= msrc.wm THEN c.n ELSE (SELECT COUNT(*) FROM messages m " +
			"WHERE m.workspace_id = msrc.ows AND m.turn_id = msrc.mturn AND m.position <= msrc.wm) END) AS BIGINT) FROM msrc " +
			seekPerRow(q.dialect, "message_counts", "c", "c.workspace_id = msrc.ows AND c.turn_id = msrc.mturn")
		var tid string
		var n int64
		err := scanEach(ctx, q, turnSourcesCTE(q.dialect, len(chunk), presentedCount(chunk))+count+" GROUP BY msrc.tid",
			turnSourcesArgs(q.dialect, ws, chunk), []any{&tid, &n}, func() {
				if n > 0 {
					out[tid] = int(n)
				}
			})
		return classify(err, "message counts of %d turns", len(chunk))
	})
	return out, err
}
