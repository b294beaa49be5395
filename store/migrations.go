package store

import "gorm.io/gorm"

// migration is one schema step. Statements run on every dialect; perDialect adds statements for
// one dialect only (after the shared ones). Versions only ever grow: never edit a released step,
// append a new one.
type migration struct {
	version    int
	name       string
	statements []string
	perDialect map[string][]string
	// fill, when set, runs after the statements in the step's transaction: what SQL alone
	// cannot do, such as indexing stored text with words cut in Go (search.go).
	fill func(tx *gorm.DB, d dialect) error
}

// The JSON columns are TEXT on both dialects: the store never queries inside them, and TEXT keeps
// the client's bytes exactly. Every *_at_us column is microseconds since the Unix epoch, UTC.
var migrations = []migration{
	{version: 1, name: "sessions, turns and messages", statements: []string{
		`CREATE TABLE sessions (
			workspace_id        TEXT    NOT NULL,
			id                  TEXT    NOT NULL,
			kind                TEXT    NOT NULL,
			provider            TEXT    NOT NULL,
			provider_session_id TEXT    NOT NULL,
			title               TEXT    NOT NULL,
			rail_section_key    TEXT    NOT NULL,
			cwd                 TEXT    NOT NULL,
			model               TEXT    NOT NULL,
			settings            TEXT    NOT NULL,
			visible             BOOLEAN NOT NULL,
			created_at_us       BIGINT  NOT NULL,
			updated_at_us       BIGINT  NOT NULL,
			deleted_at_us       BIGINT,
			PRIMARY KEY (workspace_id, id)
		)`,
		`CREATE INDEX sessions_by_creation ON sessions (workspace_id, created_at_us, id)`,
		`CREATE TABLE turns (
			workspace_id          TEXT   NOT NULL,
			id                    TEXT   NOT NULL,
			session_id            TEXT   NOT NULL,
			sequence              BIGINT NOT NULL,
			phase                 TEXT   NOT NULL,
			outcome               TEXT   NOT NULL,
			origin                TEXT   NOT NULL,
			started_at_us         BIGINT NOT NULL,
			settled_at_us         BIGINT,
			updated_at_us         BIGINT NOT NULL,
			provider_turn_id      TEXT   NOT NULL,
			provider_turn_binding TEXT,
			PRIMARY KEY (workspace_id, id),
			FOREIGN KEY (workspace_id, session_id) REFERENCES sessions (workspace_id, id)
		)`,
		`CREATE UNIQUE INDEX turns_sequence_per_session ON turns (workspace_id, session_id, sequence)`,
		`CREATE TABLE messages (
			workspace_id  TEXT   NOT NULL,
			id            TEXT   NOT NULL,
			session_id    TEXT   NOT NULL,
			turn_id       TEXT   NOT NULL,
			position      BIGINT NOT NULL,
			role          TEXT   NOT NULL,
			content       TEXT   NOT NULL,
			created_at_us BIGINT NOT NULL,
			PRIMARY KEY (workspace_id, id),
			FOREIGN KEY (workspace_id, turn_id) REFERENCES turns (workspace_id, id)
		)`,
		`CREATE INDEX messages_by_turn ON messages (workspace_id, turn_id, position)`,
		`CREATE INDEX messages_by_session ON messages (workspace_id, session_id)`,
	}},
	{version: 2, name: "fork operations and lineages", statements: []string{
		`CREATE TABLE fork_operations (
			workspace_id                 TEXT   NOT NULL,
			id                           TEXT   NOT NULL,
			request_id                   TEXT   NOT NULL,
			request_hash                 TEXT   NOT NULL,
			source_session_id            TEXT   NOT NULL,
			target_session_id            TEXT   NOT NULL,
			through_turn_id              TEXT   NOT NULL,
			target_turn_id               TEXT   NOT NULL,
			source_provider_session_id   TEXT   NOT NULL,
			source_provider_turn_id      TEXT   NOT NULL,
			source_provider_turn_binding TEXT,
			provider                     TEXT   NOT NULL,
			driver_kind                  TEXT   NOT NULL,
			driver_version               TEXT   NOT NULL,
			status                       TEXT   NOT NULL,
			error                        TEXT   NOT NULL,
			target_title                 TEXT   NOT NULL,
			target_provider_session_id   TEXT   NOT NULL,
			state_binding_mode           TEXT   NOT NULL,
			target_turn_bindings         TEXT,
			receipt                      TEXT   NOT NULL,
			snapshot                     TEXT   NOT NULL,
			snapshot_hash                TEXT   NOT NULL,
			created_at_us                BIGINT NOT NULL,
			updated_at_us                BIGINT NOT NULL,
			dispatched_at_us             BIGINT,
			accepted_at_us               BIGINT,
			completed_at_us              BIGINT,
			acknowledged_at_us           BIGINT,
			PRIMARY KEY (workspace_id, id)
		)`,
		// The three rules the engine relies on under races.
		`CREATE UNIQUE INDEX fork_operations_request ON fork_operations (workspace_id, request_id)`,
		`CREATE UNIQUE INDEX fork_operations_active_boundary ON fork_operations (workspace_id, source_session_id, through_turn_id)
			WHERE status IN ('prepared', 'dispatching', 'provider_accepted')`,
		`CREATE UNIQUE INDEX fork_operations_target_reservation ON fork_operations (workspace_id, target_session_id)
			WHERE status <> 'failed'`,
		`CREATE INDEX fork_operations_by_creation ON fork_operations (workspace_id, created_at_us, id)`,
		`CREATE INDEX fork_operations_by_boundary ON fork_operations (workspace_id, source_session_id, through_turn_id, created_at_us, id)`,
		`CREATE INDEX fork_operations_by_target ON fork_operations (workspace_id, target_session_id)`,
		`CREATE INDEX fork_operations_recoverable ON fork_operations (created_at_us, id)
			WHERE status IN ('prepared', 'dispatching', 'provider_accepted')`,
		`CREATE TABLE lineages (
			workspace_id      TEXT   NOT NULL,
			target_session_id TEXT   NOT NULL,
			operation_id      TEXT   NOT NULL,
			source_session_id TEXT   NOT NULL,
			source_turn_id    TEXT   NOT NULL,
			target_turn_id    TEXT   NOT NULL,
			forked_at_us      BIGINT NOT NULL,
			PRIMARY KEY (workspace_id, target_session_id)
		)`,
		`CREATE UNIQUE INDEX lineages_operation ON lineages (workspace_id, operation_id)`,
		`CREATE INDEX lineages_by_source ON lineages (workspace_id, source_session_id, forked_at_us, target_session_id)`,
	}},
	{version: 3, name: "event log and counters", statements: []string{
		// Counters hand out event cursors and message positions. A counter row is only ever
		// incremented, so a cursor is never reused even if old events are pruned.
		`CREATE TABLE counters (
			scope TEXT   NOT NULL,
			name  TEXT   NOT NULL,
			value BIGINT NOT NULL,
			PRIMARY KEY (scope, name)
		)`,
	}, perDialect: map[string][]string{
		// In SQLite an INTEGER PRIMARY KEY is the rowid itself: no second b-tree for the key.
		DriverSQLite:   {eventsTable("INTEGER PRIMARY KEY"), eventsIndex},
		DriverPostgres: {eventsTable("BIGINT NOT NULL PRIMARY KEY"), eventsIndex},
	}},
	{version: 4, name: "operation snapshots in their own table", statements: []string{
		// A snapshot (the frozen transcript, often tens of kilobytes) is written once and never
		// changes, while its operation's row is rewritten at every status change. Kept inline, every
		// such UPDATE rewrote the snapshot's overflow pages too.
		`CREATE TABLE fork_operation_snapshots (
			workspace_id TEXT NOT NULL,
			operation_id TEXT NOT NULL,
			snapshot     TEXT NOT NULL,
			PRIMARY KEY (workspace_id, operation_id),
			FOREIGN KEY (workspace_id, operation_id) REFERENCES fork_operations (workspace_id, id) ON DELETE CASCADE
		)`,
		`INSERT INTO fork_operation_snapshots (workspace_id, operation_id, snapshot)
			SELECT workspace_id, id, snapshot FROM fork_operations`,
		`ALTER TABLE fork_operations DROP COLUMN snapshot`,
	}},
	{version: 5, name: "unfinished operations by source", statements: []string{
		// A fork's title counts its family's unfinished operations; without this index that read
		// visited every operation ever made from the family's sessions.
		`CREATE INDEX fork_operations_unfinished_by_source ON fork_operations (workspace_id, source_session_id)
			WHERE status IN ('prepared', 'dispatching', 'provider_accepted', 'unknown')`,
	}},
	{version: 6, name: "fork count per family", statements: []string{
		// A title's number is 2 + the family's non-failed operations (family_counts.go). Counting
		// them per title walked the whole family; the writes keep the number per root instead.
		`CREATE TABLE fork_families (
			workspace_id    TEXT   NOT NULL,
			root_session_id TEXT   NOT NULL,
			forks           BIGINT NOT NULL,
			PRIMARY KEY (workspace_id, root_session_id)
		)`,
		// Every existing operation's source walked up to its root (the depth bound ends a corrupt
		// cycle, which has no root), then counted per root.
		`WITH RECURSIVE up (workspace_id, start_id, id, depth) AS (
			SELECT DISTINCT workspace_id, source_session_id, source_session_id, 0 FROM fork_operations
			UNION ALL
			SELECT u.workspace_id, u.start_id, l.source_session_id, u.depth + 1 FROM up u CROSS JOIN lineages l
			WHERE l.workspace_id = u.workspace_id AND l.target_session_id = u.id AND u.depth < 1000
		)
		INSERT INTO fork_families (workspace_id, root_session_id, forks)
		SELECT o.workspace_id, u.id, COUNT(*) FROM fork_operations o CROSS JOIN up u
		WHERE u.workspace_id = o.workspace_id AND u.start_id = o.source_session_id AND o.status <> 'failed'
			AND NOT EXISTS (SELECT 1 FROM lineages r WHERE r.workspace_id = u.workspace_id AND r.target_session_id = u.id)
		GROUP BY o.workspace_id, u.id`,
	}},
	{version: 7, name: "fork operation leases", statements: []string{
		// The instance driving an unfinished operation holds it until lease_expires_at_us; an
		// empty owner (operations from before leases) is free to claim.
		`ALTER TABLE fork_operations ADD COLUMN lease_owner TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE fork_operations ADD COLUMN lease_expires_at_us BIGINT`,
	}, perDialect: map[string][]string{
		// Every instance follows the log; a notification at each commit that appended events wakes
		// them at once (the trigger runs per statement, and PostgreSQL folds a transaction's
		// identical notifications into one, delivered at commit).
		DriverPostgres: {
			`CREATE OR REPLACE FUNCTION forkgraph_notify_events() RETURNS trigger AS $$
			BEGIN
				PERFORM pg_notify('forkgraph_events', '');
				RETURN NULL;
			END $$ LANGUAGE plpgsql`,
			`CREATE TRIGGER events_notify AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION forkgraph_notify_events()`,
		},
	}},
	{version: 8, name: "reconciliation of unknown deliveries", statements: []string{
		`ALTER TABLE fork_operations ADD COLUMN error_reason TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE fork_operations ADD COLUMN reconcile_attempts BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE fork_operations ADD COLUMN last_reconciled_at_us BIGINT`,
		`ALTER TABLE fork_operations ADD COLUMN next_reconcile_at_us BIGINT`,
		// Claims find the unknown operations whose next attempt is due without visiting the rest.
		`CREATE INDEX fork_operations_reconcile_due ON fork_operations (next_reconcile_at_us)
			WHERE status = 'unknown' AND next_reconcile_at_us IS NOT NULL`,
	}},
	{version: 9, name: "unsettled turns", statements: []string{
		// The active turn is the last unsettled one; with few unsettled turns this index finds it
		// in one seek, where the unique index would walk back over every settled turn.
		`CREATE INDEX turns_unsettled ON turns (workspace_id, session_id, sequence) WHERE phase <> 'settled'`,
	}},
	{version: 10, name: "session counts for totalCount", statements: []string{
		sessionCountsDDL,
		sessionCountsBackfill,
	}, perDialect: map[string][]string{
		DriverSQLite:   sqliteSessionCountTriggers,
		DriverPostgres: postgresSessionCountTriggers,
	}},
	{version: 11, name: "turn counts for totalCount; messages without a session index", statements: []string{
		turnCountsDDL,
		turnCountsBackfill,
		// Only a purge looked messages up by session, and a session's messages are those of its
		// turns (messages_by_turn finds them): the index cost every copied message an entry,
		// about 6 KB per 100-message fork.
		`DROP INDEX messages_by_session`,
	}, perDialect: map[string][]string{
		DriverSQLite:   sqliteTurnCountTriggers,
		DriverPostgres: postgresTurnCountTriggers,
	}},
	// No statements: from this version on, SQLite stores operation snapshots in the binary
	// encoding (snapshot_binary.go), which a forkgraph from before cannot decode. The version makes
	// such a binary refuse the file at start (ErrSchemaTooNew) instead of failing on the first
	// snapshot it reads. PostgreSQL keeps the compact JSON; there the step only records the
	// version, so there too an older instance that restarts stays down (roll upgrades forward).
	{version: 12, name: "binary operation snapshots on SQLite"},
	{version: 13, name: "fork operation partial indexes on derived columns", statements: []string{
		// Each status change rewrote the entries of the four partial indexes whose WHERE names
		// status, even when the row stayed in them (operation_classes.go): they now select on
		// columns derived from status, which an update names only when they change, and the
		// target's two indexes (the reservation, partial, and a plain one) become one.
		`ALTER TABLE fork_operations ADD COLUMN activity SMALLINT NOT NULL DEFAULT 0`,
		`ALTER TABLE fork_operations ADD COLUMN holds_target SMALLINT DEFAULT 1`,
		`UPDATE fork_operations SET ` + classDerivationSQL,
		`DROP INDEX fork_operations_active_boundary`,
		`DROP INDEX fork_operations_target_reservation`,
		`DROP INDEX fork_operations_by_target`,
		`DROP INDEX fork_operations_recoverable`,
		`DROP INDEX fork_operations_unfinished_by_source`,
		`CREATE UNIQUE INDEX fork_operations_active_boundary ON fork_operations (workspace_id, source_session_id, through_turn_id)
			WHERE ` + isActiveSQL,
		`CREATE UNIQUE INDEX fork_operations_target_reservation ON fork_operations (workspace_id, target_session_id, holds_target)`,
		`CREATE INDEX fork_operations_recoverable ON fork_operations (created_at_us, id) WHERE ` + isActiveSQL,
		`CREATE INDEX fork_operations_unfinished_by_source ON fork_operations (workspace_id, source_session_id)
			WHERE ` + isUnfinishedSQL,
	}},
	{version: 14, name: "provider sessions owned by a workspace", perDialect: map[string][]string{
		// A provider session id belongs to the first workspace that reports it: the key makes two
		// workspaces claiming one at once (two instances on PostgreSQL) one owner and one refusal.
		// On SQLite the rows live in the key's b-tree (WITHOUT ROWID): a claim, one per committed
		// fork, writes one page instead of a table page and an index page.
		DriverSQLite:   {providerSessionsDDL + " WITHOUT ROWID", providerSessionsBackfill},
		DriverPostgres: {providerSessionsDDL, providerSessionsBackfill},
	}},
	// A committed fork reads its inherited history through segments instead of holding a copy
	// (history.go, docs/design/shared-history.md). Forks committed before keep their copies.
	{version: 15, name: "shared history", statements: historyMigration},
	{version: 16, name: "who requested and acknowledged a fork", statements: []string{
		// The subject of the caller's credential (a JWT's sub, a static token's name); empty for
		// operations from before, and in open mode.
		`ALTER TABLE fork_operations ADD COLUMN requested_by TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE fork_operations ADD COLUMN acknowledged_by TEXT NOT NULL DEFAULT ''`,
	}},
	{version: 17, name: "turn submissions and server keys", statements: []string{
		submissionsDDL,
		// A purge removes a session's submissions with its turns.
		`CREATE INDEX turn_submissions_by_session ON turn_submissions (workspace_id, session_id)`,
		serverKeysDDL,
	}},
	{version: 18, name: "turns by provider turn", statements: []string{turnsByProviderTurnIndex}},
	{version: 19, name: "workspace settings", statements: []string{workspaceSettingsDDL}},
	// Sessions are found by the words of their titles and messages (search.go).
	searchMigration,
	targetMigration,
	searchCountsMigration,
	// Typed message parts and a turn's error, file changes and completed command
	// (typed_columns.go); rows from before read as plain text and no details.
	{version: 23, name: "typed message parts and turn details", statements: richMessagesStatements},
	sessionMetadataMigration,
	interactionsMigration,
	typedReferencesMigration,
	messageCountsMigration,
	snapshotRulesMigration,
	railProjectPathMigration,
	searchCoveringMigration,
	prefixMigration,
	interactionOwnerMigration,
}

// sessionMetadataMigration adds a session's free-form metadata, NULL when none was reported.
var sessionMetadataMigration = migration{version: 24, name: "session metadata", statements: []string{
	`ALTER TABLE sessions ADD COLUMN metadata TEXT`,
}}

// railProjectPathMigration adds the path of the project a session is shown under in the sidebar
// (reference §1.1: a fork copies it); rows from before have none.
var railProjectPathMigration = migration{version: 29, name: "session rail project path", statements: []string{
	`ALTER TABLE sessions ADD COLUMN rail_project_path TEXT NOT NULL DEFAULT ''`,
}}

// snapshotRulesMigration (migration 28) adds a session's runtime context (NULL when none was
// reported), and puts audit messages on the history clock and has a
// fork's child read its inherited ones through its History instead of holding copies: a
// position per row (0 for those from before, which is at or below every watermark frozen after
// them), the bound of each History (-1, forkengine.LegacyAuditBound, for the children
// committed before: they keep their copies and read none through their segments), and the
// copies those children hold marked -1, so their own forks read them from the rows they copy,
// never twice.
var snapshotRulesMigration = migration{version: 28, name: "session runtime context; audit messages on the history clock, inherited through histories", statements: []string{
	`ALTER TABLE sessions ADD COLUMN runtime_context TEXT`,
	`ALTER TABLE audit_messages ADD COLUMN position BIGINT NOT NULL DEFAULT 0`,
	`ALTER TABLE histories ADD COLUMN audit_bound BIGINT NOT NULL DEFAULT -1`,
	`UPDATE audit_messages SET position = -1 WHERE EXISTS (SELECT 1 FROM histories h
		WHERE h.workspace_id = audit_messages.workspace_id AND h.session_id = audit_messages.session_id
		AND audit_messages.after_sequence < h.boundary)`,
}}

func eventsTable(cursorType string) string {
	return `CREATE TABLE events (
		cursor         ` + cursorType + `,
		workspace_id   TEXT   NOT NULL,
		kind           TEXT   NOT NULL,
		session_id     TEXT   NOT NULL,
		turn_id        TEXT   NOT NULL,
		operation_id   TEXT   NOT NULL,
		status         TEXT   NOT NULL,
		occurred_at_us BIGINT NOT NULL
	)`
}

const eventsIndex = `CREATE INDEX events_by_workspace ON events (workspace_id, cursor)`

// sql returns the statements of m for dialect name, shared ones first.
func (m migration) sql(name string) []string {
	return append(append([]string(nil), m.statements...), m.perDialect[name]...)
}
