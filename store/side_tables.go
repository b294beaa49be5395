package store

import (
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The side tables, described once like the entity tables (table.go): counters, claims, count
// rows and the search index. Their statements take column lists, VALUES, upserts and scan
// targets from these descriptions; their DDL stays in the migrations, and the SQL bodies of the
// PostgreSQL trigger functions (session_counts.go, turn_counts.go, message_counts.go, search.go)
// keep their text. TestSideTablesHaveNoHandWrittenColumnList holds the rest of store/ to it.

// counterRow is a row of counters: per scope (a workspace), the last value handed out of each
// named sequence (the message positions).
type counterRow struct {
	scope, name string
	value       int64
}

var countersTable = newGlobalTable("counters", []string{"scope", "name"},
	textColumn("scope", func(r *counterRow) *string { return &r.scope }),
	textColumn("name", func(r *counterRow) *string { return &r.name }),
	integerColumn("value", func(r *counterRow) *int64 { return &r.value }),
)

// familyRow is a row of fork_families: the non-failed forks of a root's family (family_counts.go).
type familyRow struct {
	workspaceID, root string
	forks             int64
}

var forkFamiliesTable = newTable("fork_families", []string{"workspace_id", "root_session_id"},
	textColumn("workspace_id", func(r *familyRow) *string { return &r.workspaceID }),
	textColumn("root_session_id", func(r *familyRow) *string { return &r.root }),
	integerColumn("forks", func(r *familyRow) *int64 { return &r.forks }),
)

// snapshotRow is a row of fork_operation_snapshots: value is what encodeSnapshotFor binds (text
// or bytes, per dialect), text what a read returns.
type snapshotRow struct {
	workspaceID, operationID string
	value                    any
	text                     string
}

var snapshotsTable = newTable("fork_operation_snapshots", []string{"workspace_id", "operation_id"},
	textColumn("workspace_id", func(r *snapshotRow) *string { return &r.workspaceID }),
	textColumn("operation_id", func(r *snapshotRow) *string { return &r.operationID }),
	column[snapshotRow]{name: "snapshot", scan: func(r *snapshotRow) any { return &r.text }, value: func(r *snapshotRow) any { return r.value }},
)

var providerSessionsTable = newGlobalTable("provider_sessions", []string{"provider", "provider_session_id"},
	textColumn("provider", func(c *forkengine.ProviderSessionClaim) *string { return &c.Provider }),
	textColumn("provider_session_id", func(c *forkengine.ProviderSessionClaim) *string { return &c.ProviderSessionID }),
	textColumn("workspace_id", func(c *forkengine.ProviderSessionClaim) *string { return &c.WorkspaceID }),
	microsColumn("claimed_at_us", func(c *forkengine.ProviderSessionClaim) *time.Time { return &c.At }),
)

// serverKeyRow is a row of server_keys: a key every instance agrees on, as hex.
type serverKeyRow struct{ name, keyHex string }

var serverKeysTable = newGlobalTable("server_keys", []string{"name"},
	textColumn("name", func(r *serverKeyRow) *string { return &r.name }),
	textColumn("key_hex", func(r *serverKeyRow) *string { return &r.keyHex }),
)

// sessionCountRow is a row of session_counts: the sessions of a class in one shard (session_counts.go).
type sessionCountRow struct {
	workspaceID     string
	class, shard, n int64
}

var sessionCountsTable = newTable("session_counts", []string{"workspace_id", "class", "shard"},
	textColumn("workspace_id", func(r *sessionCountRow) *string { return &r.workspaceID }),
	integerColumn("class", func(r *sessionCountRow) *int64 { return &r.class }),
	integerColumn("shard", func(r *sessionCountRow) *int64 { return &r.shard }),
	integerColumn("n", func(r *sessionCountRow) *int64 { return &r.n }),
)

// turnCountsRow is a row of turn_counts: a session's own turns, and the messages under them
// (message_counts.go).
type turnCountsRow struct {
	workspaceID, sessionID string
	n, messages            int64
}

var turnCountsTable = newTable("turn_counts", []string{"workspace_id", "session_id"},
	textColumn("workspace_id", func(r *turnCountsRow) *string { return &r.workspaceID }),
	textColumn("session_id", func(r *turnCountsRow) *string { return &r.sessionID }),
	integerColumn("n", func(r *turnCountsRow) *int64 { return &r.n }),
	integerColumn("messages", func(r *turnCountsRow) *int64 { return &r.messages }), // migration 27
)

// turnCountColumns are turn_counts without messages: what its turn triggers write.
var turnCountColumns = turnCountsTable.only("workspace_id", "session_id", "n")

var submissionsTable = newTable("turn_submissions", []string{"workspace_id", "turn_id"},
	textColumn("workspace_id", func(s *forkengine.Submission) *string { return &s.WorkspaceID }),
	textColumn("turn_id", func(s *forkengine.Submission) *string { return &s.TurnID }),
	textColumn("session_id", func(s *forkengine.Submission) *string { return &s.SessionID }),
	textColumn("client_submit_id", func(s *forkengine.Submission) *string { return &s.ClientSubmitID }),
	textColumn("content", func(s *forkengine.Submission) *forkengine.SubmissionContent { return &s.Content }),
	textColumn("text_digest", func(s *forkengine.Submission) *string { return &s.TextDigest }),
	microsColumn("recorded_at_us", func(s *forkengine.Submission) *time.Time { return &s.RecordedAt }),
)

var workspaceSettingsTable = newTable("workspace_settings", []string{"workspace_id"},
	textColumn("workspace_id", func(s *forkengine.WorkspaceSettings) *string { return &s.WorkspaceID }),
	booleanColumn("forking_disabled", func(s *forkengine.WorkspaceSettings) *bool { return &s.ForkingDisabled }),
	microsColumn("updated_at_us", func(s *forkengine.WorkspaceSettings) *time.Time { return &s.UpdatedAt }),
)

// termRow is a row of session_terms, the search index (search.go): a word of a session, under
// the session's creation time and class, with the sources it was seen in (1 the title, 2 a message).
type termRow struct {
	workspaceID, term string
	createdAt         int64
	sessionID         string
	class, sources    int64
}

var termsTable = newTable("session_terms", []string{"workspace_id", "term", "created_at_us", "session_id"},
	textColumn("workspace_id", func(r *termRow) *string { return &r.workspaceID }),
	textColumn("term", func(r *termRow) *string { return &r.term }),
	integerColumn("created_at_us", func(r *termRow) *int64 { return &r.createdAt }),
	textColumn("session_id", func(r *termRow) *string { return &r.sessionID }),
	integerColumn("class", func(r *termRow) *int64 { return &r.class }),
	integerColumn("sources", func(r *termRow) *int64 { return &r.sources }),
)

// termCountRow is a row of session_term_counts: the sessions of a class that have a word, in one shard.
type termCountRow struct {
	workspaceID, term string
	class, shard, n   int64
}

var termCountsTable = newTable("session_term_counts", []string{"workspace_id", "term", "class", "shard"},
	textColumn("workspace_id", func(r *termCountRow) *string { return &r.workspaceID }),
	textColumn("term", func(r *termCountRow) *string { return &r.term }),
	integerColumn("class", func(r *termCountRow) *int64 { return &r.class }),
	integerColumn("shard", func(r *termCountRow) *int64 { return &r.shard }),
	integerColumn("n", func(r *termCountRow) *int64 { return &r.n }),
)
