package store

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"gorm.io/gorm"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Session search (forkengine/search.go says what matches). The index is an inverted index in a
// plain b-tree table, the same on both databases: session_terms holds one row per (word,
// session) whose document has the word, keyed (workspace_id, term, created_at_us, session_id).
// A search page is then one range of that key, in the list's own (createdAt, id) order: the
// rows after the cursor, LIMIT the page, and a page costs its rows whatever the word matches.
//
// Why not the engines' full-text indexes: neither returns its hits in (createdAt, id) order, so
// a page of a word that matches 50,000 sessions would read and sort all 50,000 (O(matches), not
// O(page)); SQLite's FTS5 needs the sqlite_fts5 build tag, which would change every build
// command; and words cut in Go are the same words on both databases and in the in-memory store.
//
// Each row carries its session's class (the bits of session_counts: deleted 4, visible 2, root
// 1) and where the word was seen (sources: 1 the title, 2 a message). session_term_counts holds,
// per (workspace, word, class), how many sessions have the word, so a one-word search counts in
// O(1) as the plain list does. The rows are written by the store's own writes: UpsertSession
// indexes the title (and re-indexes it when it changes), InsertMessages indexes each message's
// words under the message's session; addTerms counts the rows it inserts (since migration 22).
// Triggers keep the rest in step, all of it rare: a row's class follows its session and lineage
// (in the statement that changes them), a purged session's rows are deleted, and a deleted or
// reclassed row moves its count.
//
// A fork's child indexes its title and the messages it holds itself, never its inherited
// history (a fork is O(1) in its transcript and stays so): a search for what was said before a
// fork finds the source, where it was said.

// searchMigration creates the index (migration 20); fillSearchIndex indexes what is stored.
var searchMigration = migration{version: 20, name: "session search index", fill: fillSearchIndex, perDialect: map[string][]string{
	DriverSQLite: append([]string{
		sessionTermsTable + " WITHOUT ROWID", sessionTermsBySession, sessionTermCountsTable + " WITHOUT ROWID",
	}, sqliteSearchTriggers...),
	DriverPostgres: append([]string{sessionTermsTable, sessionTermsBySession, sessionTermCountsTable}, postgresSearchTriggers...),
}}

// searchCountsMigration (22) stops counting inserted words by trigger: addTerms counts the rows
// it inserts, in the same transaction. The count rows are then computed again from the index,
// once, so that the words a migration 20 backfill counted by both ways (it runs this code with
// the old trigger still in place) are counted once.
var searchCountsMigration = migration{version: 22, name: "search word counts written with the words", perDialect: map[string][]string{
	DriverSQLite: {"DROP TRIGGER session_terms_counted_insert", recountTermsDelete, recountTermsInsert},
	DriverPostgres: {"DROP TRIGGER session_terms_counted_insert ON session_terms", "DROP FUNCTION forkgraph_count_inserted_terms()",
		recountTermsDelete, recountTermsInsert},
}}

// searchCoveringMigration (30) puts each row's class in session_terms' primary key index on
// PostgreSQL (INCLUDE (class)), so the walk of the lead word's rows, which filters by class, is
// an index-only scan: before, each of its up to forkengine.SearchScanRows rows fetched its heap
// page (4,000 random page reads per walk, about half of a two-word search's time at 100,000
// sessions, docs/BENCHMARKS.md). ON CONFLICT still infers the key from its four columns (an
// INCLUDE column is not part of it). SQLite's table is WITHOUT ROWID: its key's b-tree holds
// the whole row already. The rebuild holds the table's lock while it runs (about 10-20 s for
// 6.5 million rows, the 100,000-session dataset) and may take longer than a request's
// statement_timeout, which it lifts for its own transaction.
var searchCoveringMigration = migration{version: 30, name: "search index rows carry their class", perDialect: map[string][]string{
	DriverPostgres: {"SET LOCAL statement_timeout = 0",
		"ALTER TABLE session_terms DROP CONSTRAINT session_terms_pkey, ADD CONSTRAINT session_terms_pkey " + sessionTermsKeyPostgres},
}}

// sessionTermsKeyPostgres is session_terms' primary key on PostgreSQL since migration 30 (a bulk
// load builds it again with this definition).
const sessionTermsKeyPostgres = "PRIMARY KEY (workspace_id, term, created_at_us, session_id) INCLUDE (class)"

var (
	recountTermsDelete = "DELETE FROM session_term_counts"
	recountTermsInsert = termCountsTable.insertInto() + `
		SELECT workspace_id, term, class, 0, COUNT(*) FROM session_terms GROUP BY workspace_id, term, class`
)

const sessionTermsTable = `CREATE TABLE session_terms (
	workspace_id  TEXT     NOT NULL,
	term          TEXT     NOT NULL,
	created_at_us BIGINT   NOT NULL,
	session_id    TEXT     NOT NULL,
	class         SMALLINT NOT NULL,
	sources       SMALLINT NOT NULL,
	PRIMARY KEY (workspace_id, term, created_at_us, session_id)
)`

// A session's rows: what a class change, a re-keyed creation time and a purge rewrite.
const sessionTermsBySession = `CREATE INDEX session_terms_by_session ON session_terms (workspace_id, session_id)`

const sessionTermCountsTable = `CREATE TABLE session_term_counts (
	workspace_id TEXT   NOT NULL,
	term         TEXT   NOT NULL,
	class        BIGINT NOT NULL,
	shard        BIGINT NOT NULL,
	n            BIGINT NOT NULL,
	PRIMARY KEY (workspace_id, term, class, shard)
)`

// The class of a session's rows follows the session (deleted and visible bits, from NEW) and
// its lineage (the root bit), each keeping the other's bits.
var (
	reclassTermsSQL = "UPDATE session_terms SET class = " + sessionBaseClassSQL("NEW") +
		" + class % 2 WHERE workspace_id = NEW.workspace_id AND session_id = NEW.id"
	forkedTermsSQL   = "UPDATE session_terms SET class = class - class % 2 WHERE workspace_id = NEW.workspace_id AND session_id = NEW.target_session_id"
	unforkedTermsSQL = "UPDATE session_terms SET class = class - class % 2 + 1 WHERE workspace_id = OLD.workspace_id AND session_id = OLD.target_session_id"
	purgedTermsSQL   = "DELETE FROM session_terms WHERE workspace_id = OLD.workspace_id AND session_id = OLD.id"
)

func sqliteBumpTermSQL(row, delta string) string {
	return termCountsTable.insertInto() + " VALUES (" + row + ".workspace_id, " + row +
		".term, " + row + ".class, 0, " + delta + ")" + termCountsTable.onConflictAdd("n") + ";"
}

var sqliteSearchTriggers = []string{
	"CREATE TRIGGER session_terms_counted_insert AFTER INSERT ON session_terms BEGIN " + sqliteBumpTermSQL("NEW", "1") + " END",
	"CREATE TRIGGER session_terms_counted_delete AFTER DELETE ON session_terms BEGIN " + sqliteBumpTermSQL("OLD", "-1") + " END",
	"CREATE TRIGGER session_terms_counted_update AFTER UPDATE OF class ON session_terms WHEN OLD.class <> NEW.class BEGIN " +
		sqliteBumpTermSQL("OLD", "-1") + "\n" + sqliteBumpTermSQL("NEW", "1") + " END",
	"CREATE TRIGGER sessions_terms_reclassed AFTER UPDATE OF deleted_at_us, visible ON sessions WHEN " + sessionClassChangedSQL +
		" BEGIN " + reclassTermsSQL + "; END",
	"CREATE TRIGGER sessions_terms_purged AFTER DELETE ON sessions BEGIN " + purgedTermsSQL + "; END",
	"CREATE TRIGGER lineages_terms_forked AFTER INSERT ON lineages BEGIN " + forkedTermsSQL + "; END",
	"CREATE TRIGGER lineages_terms_unforked AFTER DELETE ON lineages BEGIN " + unforkedTermsSQL + "; END",
}

// On PostgreSQL inserted and deleted rows are counted by statement triggers over transition tables: a message's
// fifty new words are one grouped upsert of the count rows, not fifty trigger calls. Count rows
// are sharded by backend pid as session_counts' are, and written in key order, so two writers
// that share a shard wait for each other instead of deadlocking.
func postgresBumpTermsSQL(rows, sign string) string {
	return termCountsTable.insertInto() + `
		SELECT workspace_id, term, class, pg_backend_pid() % 16, ` + sign + `COUNT(*) FROM ` + rows + `
		GROUP BY workspace_id, term, class ORDER BY workspace_id, term, class
		` + strings.TrimPrefix(termCountsTable.onConflictAdd("n"), " ") // the text migration 22 created
}

var postgresSearchTriggers = []string{
	`CREATE OR REPLACE FUNCTION forkgraph_count_inserted_terms() RETURNS trigger AS $$
	BEGIN ` + postgresBumpTermsSQL("new_rows", "") + `; RETURN NULL; END $$ LANGUAGE plpgsql`,
	`CREATE OR REPLACE FUNCTION forkgraph_count_deleted_terms() RETURNS trigger AS $$
	BEGIN ` + postgresBumpTermsSQL("old_rows", "-") + `; RETURN NULL; END $$ LANGUAGE plpgsql`,
	// A row moves between classes only when a session's class changes (a soft delete, a visibility
	// change, a lineage written or purged): rare, so a row trigger does it, named on class alone
	// so that an upsert that only gives a row a new source fires nothing. (A statement trigger
	// over transition tables fires for every upsert, and joining its two tables cost 16 ms.)
	`CREATE OR REPLACE FUNCTION forkgraph_count_reclassed_term() RETURNS trigger AS $$
	BEGIN
		INSERT INTO session_term_counts (workspace_id, term, class, shard, n)
		VALUES (OLD.workspace_id, OLD.term, OLD.class, pg_backend_pid() % 16, -1), (NEW.workspace_id, NEW.term, NEW.class, pg_backend_pid() % 16, 1)
		ON CONFLICT (workspace_id, term, class, shard) DO UPDATE SET n = session_term_counts.n + excluded.n;
		RETURN NULL;
	END $$ LANGUAGE plpgsql`,
	`CREATE TRIGGER session_terms_counted_insert AFTER INSERT ON session_terms REFERENCING NEW TABLE AS new_rows
		FOR EACH STATEMENT EXECUTE FUNCTION forkgraph_count_inserted_terms()`,
	`CREATE TRIGGER session_terms_counted_delete AFTER DELETE ON session_terms REFERENCING OLD TABLE AS old_rows
		FOR EACH STATEMENT EXECUTE FUNCTION forkgraph_count_deleted_terms()`,
	`CREATE TRIGGER session_terms_counted_update AFTER UPDATE OF class ON session_terms FOR EACH ROW
		WHEN (OLD.class <> NEW.class) EXECUTE FUNCTION forkgraph_count_reclassed_term()`,
	`CREATE OR REPLACE FUNCTION forkgraph_reclass_terms() RETURNS trigger AS $$
	BEGIN
		IF TG_TABLE_NAME = 'lineages' THEN
			IF TG_OP = 'INSERT' THEN ` + forkedTermsSQL + `;
			ELSE ` + unforkedTermsSQL + `;
			END IF;
		ELSIF TG_OP = 'DELETE' THEN ` + purgedTermsSQL + `;
		ELSE ` + reclassTermsSQL + `;
		END IF;
		RETURN NULL;
	END $$ LANGUAGE plpgsql`,
	`CREATE TRIGGER sessions_terms_reclassed AFTER UPDATE OF deleted_at_us, visible ON sessions FOR EACH ROW
		WHEN (` + sessionClassChangedSQL + `) EXECUTE FUNCTION forkgraph_reclass_terms()`,
	`CREATE TRIGGER sessions_terms_purged AFTER DELETE ON sessions FOR EACH ROW EXECUTE FUNCTION forkgraph_reclass_terms()`,
	`CREATE TRIGGER lineages_terms_reclassed AFTER INSERT OR DELETE ON lineages FOR EACH ROW EXECUTE FUNCTION forkgraph_reclass_terms()`,
}

// termBatch bounds the words of one statement (PostgreSQL binds one parameter per word).
const termBatch = 1000

// termRows is a derived table of one column, value, holding terms: json_each of one bound array
// on SQLite (idList), a VALUES list on PostgreSQL.
func (q queries) termRows(terms []string) (string, []any) {
	if q.dialect.jsonIDLists {
		return "(SELECT value FROM json_each(?)) w", []any{idList(terms)}
	}
	args := make([]any, len(terms))
	var b strings.Builder
	b.WriteString("(VALUES ")
	for i, t := range terms {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?)")
		args[i] = t
	}
	b.WriteString(") AS w (value)")
	return b.String(), args
}

// sessionTerm is one word of one session's document.
type sessionTerm struct{ session, term string }

// addTerms gives each pair's row the source bit (1 title, 2 messages), inserting the rows that
// are missing with their session's class and creation time, and counts the inserted rows in
// session_term_counts. Per session of the pairs, one upsert per termBatch of its words reads
// the session's row once (a materialized CTE) and upserts each word's row by its key; it returns
// the rows it inserted or gave the bit, and those with the bit alone are the new ones. Their
// counts are then one grouped upsert for the whole call. A row that has the bit already is left
// alone (the upsert's WHERE) and returns nothing, so a message of words its session said before
// writes nothing but the statement.
//
// Before migration 22 a row trigger counted each inserted row and every pair joined the
// sessions and lineages again: an appended turn cost 5-15 times what it did without search
// (docs/BENCHMARKS.md). The rows are counted from what the upsert returns, in the same
// transaction, so a row another writer inserted first (PostgreSQL) is counted by that writer.
func (q queries) addTerms(db *gorm.DB, ws string, pairs []sessionTerm, source int) error {
	var order []string
	words := map[string][]string{}
	for _, p := range pairs {
		if _, ok := words[p.session]; !ok {
			order = append(order, p.session)
		}
		words[p.session] = append(words[p.session], p.term)
	}
	added := map[termClass]int64{}
	for _, session := range order {
		for chunk := range slices.Chunk(words[session], termBatch) {
			if err := q.addSessionTerms(db, ws, session, chunk, source, added); err != nil {
				return classify(err, "index %d words of session %s", len(words[session]), session)
			}
		}
	}
	if len(added) == 0 {
		return nil
	}
	if err := q.bumpTermCounts(db, ws, added); err != nil {
		return classify(err, "count %d new words", len(added))
	}
	return nil
}

// termClass is a word and a session class, a row of session_term_counts (summed over shards).
type termClass struct {
	term  string
	class int64
}

// The parts of the index's writes taken from the descriptions, built once: a write runs per
// message.
var (
	insertTermsSQL      = termsTable.insertInto()
	addTermSourceSQL    = termsTable.onConflict("sources = session_terms.sources + ") // and the source's bit
	insertTermCountsSQL = termCountsTable.insertInto()
	bumpTermCountsSQL   = termCountsTable.onConflictAdd("n")
)

// addSessionTerms upserts one session's rows of terms (see addTerms) and adds the rows it
// inserted to added.
func (q queries) addSessionTerms(db *gorm.DB, ws, session string, terms []string, source int, added map[termClass]int64) error {
	rows, args := q.termRows(terms)
	bit := strconv.Itoa(source)
	var k termClass
	var sources int
	return q.queryEach(db, `WITH s AS MATERIALIZED (SELECT s.workspace_id, s.id, s.created_at_us, `+sessionClassSQL("s")+` AS class
			FROM sessions s WHERE s.workspace_id = ? AND s.id = ?)
		`+insertTermsSQL+`
		SELECT s.workspace_id, w.value, s.created_at_us, s.id, s.class, `+bit+` FROM s CROSS JOIN `+rows+` WHERE true
		`+addTermSourceSQL+bit+`
		WHERE session_terms.sources % `+strconv.Itoa(source*2)+` < `+bit+`
		RETURNING term, class, sources`, append([]any{ws, session}, args...),
		[]any{&k.term, &k.class, &sources}, func() {
			if sources == source {
				added[k]++
			}
		})
}

// bumpTermCounts adds each word and class's new rows to session_term_counts: one statement (a
// JSON array of the counts on SQLite, a VALUES list on PostgreSQL, sharded by backend as the
// session counts are).
func (q queries) bumpTermCounts(db *gorm.DB, ws string, added map[termClass]int64) error {
	// In key order, so that two PostgreSQL writers sharing a shard wait for each other instead
	// of deadlocking.
	keys := slices.SortedFunc(maps.Keys(added), func(a, b termClass) int {
		if c := strings.Compare(a.term, b.term); c != 0 {
			return c
		}
		return int(a.class - b.class)
	})
	counts := make([][3]any, len(keys))
	for i, k := range keys {
		counts[i] = [3]any{k.term, k.class, added[k]}
	}
	var rows, shard string
	var args []any
	if q.dialect.jsonIDLists {
		raw, err := json.Marshal(counts)
		if err != nil {
			return err
		}
		rows = "(SELECT json_extract(value, '$[0]') AS term, json_extract(value, '$[1]') AS class, json_extract(value, '$[2]') AS n FROM json_each(?)) c"
		shard, args = "0", []any{string(raw)}
	} else {
		var b strings.Builder
		b.WriteString("(VALUES ")
		for i, c := range counts {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, CAST(? AS BIGINT), CAST(? AS BIGINT))")
			args = append(args, c[:]...)
		}
		b.WriteString(") AS c (term, class, n)")
		rows, shard = b.String(), "pg_backend_pid() % 16"
	}
	_, err := q.execFixed(db, insertTermCountsSQL+`
		SELECT ?, c.term, c.class, `+shard+`, c.n FROM `+rows+` WHERE true
		`+bumpTermCountsSQL, append([]any{ws}, args...)...)
	return err
}

// queryEach runs a statement that returns rows inside db's transaction, scanning each into
// targets and calling each.
func (q queries) queryEach(db *gorm.DB, query string, args, targets []any, each func()) error {
	ctx := db.Statement.Context
	if q.dialect.writesIgnoreCancel { // as execFixed: it writes
		if err := ctx.Err(); err != nil {
			return err
		}
		ctx = context.WithoutCancel(ctx)
	}
	return q.scanRows(ctx, db.Statement.ConnPool, query, args, targets, each)
}

// termsOf pairs one session with each of terms.
func termsOf(session string, terms []string) []sessionTerm {
	out := make([]sessionTerm, len(terms))
	for i, t := range terms {
		out[i] = sessionTerm{session, t}
	}
	return out
}

// dropTitleTerms takes the title bit from the session's rows of terms and deletes the rows left
// with no source.
func (q queries) dropTitleTerms(db *gorm.DB, ws, sessionID string, createdAtUS int64, terms []string) error {
	for start := 0; start < len(terms); start += termBatch {
		rows, words := q.termRows(terms[start:min(start+termBatch, len(terms))])
		where := " WHERE workspace_id = ? AND created_at_us = ? AND session_id = ? AND term IN (SELECT value FROM " + rows + ")"
		args := append([]any{ws, createdAtUS, sessionID}, words...)
		if _, err := q.execFixed(db, "UPDATE session_terms SET sources = sources - 1"+where+" AND sources % 2 = 1", args...); err != nil {
			return classify(err, "unindex the old title of session %s", sessionID)
		}
		if _, err := q.execFixed(db, "DELETE FROM session_terms"+where+" AND sources = 0", args...); err != nil {
			return classify(err, "unindex the old title of session %s", sessionID)
		}
	}
	return nil
}

// titleBeforeSQL reads what a session upsert replaces: the indexed title and creation time.
const titleBeforeSQL = "SELECT title, created_at_us FROM sessions WHERE workspace_id = ? AND id = ?"

// priorTitle is the stored title and creation time of a session, before an upsert.
type priorTitle struct {
	found     bool
	title     string
	createdAt int64
}

func (tx *txn) titleBefore(ctx context.Context, ws, id string) (priorTitle, error) {
	var p priorTitle
	tx.statements.Add(1)
	rows, err := tx.db.WithContext(ctx).Statement.ConnPool.QueryContext(ctx, tx.dialect.placeholders(titleBeforeSQL), ws, id)
	if err != nil {
		return p, classify(err, "read the title of session %s", id)
	}
	defer rows.Close()
	if rows.Next() {
		p.found = true
		if err := rows.Scan(&p.title, &p.createdAt); err != nil {
			return p, classify(err, "read the title of session %s", id)
		}
	}
	return p, classify(rows.Err(), "read the title of session %s", id)
}

// indexTitle brings the index in step with s, whose row was just written over prior: the words
// of the new title gain the title bit, the old title's other words lose it, and a changed
// creation time re-keys the session's rows. An unchanged title writes nothing.
func (tx *txn) indexTitle(db *gorm.DB, prior priorTitle, s forkengine.Session) error {
	created := micros(s.CreatedAt)
	if prior.found && prior.createdAt != created {
		if _, err := tx.execFixed(db, "UPDATE session_terms SET created_at_us = ? WHERE workspace_id = ? AND session_id = ?",
			created, s.WorkspaceID, s.ID); err != nil {
			return classify(err, "re-key the index of session %s", s.ID)
		}
	}
	if prior.found && prior.title == s.Title {
		return nil
	}
	next := forkengine.SearchTerms(s.Title)
	if prior.found {
		var gone []string
		for _, w := range forkengine.SearchTerms(prior.title) {
			if !slices.Contains(next, w) {
				gone = append(gone, w)
			}
		}
		if err := tx.dropTitleTerms(db, s.WorkspaceID, s.ID, created, gone); err != nil {
			return err
		}
	}
	return tx.addTerms(db, s.WorkspaceID, termsOf(s.ID, next), 1)
}

// indexMessages adds the words of msgs to their sessions' documents: per workspace, the
// distinct (session, word) pairs of the batch, in statements of termBatch pairs.
func (q queries) indexMessages(db *gorm.DB, msgs []forkengine.Message) error {
	type pairKey struct{ ws, session, term string }
	seen := map[pairKey]bool{}
	var order []string
	pairs := map[string][]sessionTerm{}
	for _, m := range msgs {
		if _, ok := pairs[m.WorkspaceID]; !ok {
			order = append(order, m.WorkspaceID)
			pairs[m.WorkspaceID] = nil
		}
		for _, w := range forkengine.SearchTerms(m.Content) {
			if k := (pairKey{m.WorkspaceID, m.SessionID, w}); !seen[k] {
				seen[k] = true
				pairs[m.WorkspaceID] = append(pairs[m.WorkspaceID], sessionTerm{m.SessionID, w})
			}
		}
	}
	for _, ws := range order {
		if err := q.addTerms(db, ws, pairs[ws], 2); err != nil {
			return err
		}
	}
	return nil
}

// fillSearchIndex indexes the sessions and messages stored before migration 16, in pages of
// the messages' key, inside the migration's transaction.
func fillSearchIndex(db *gorm.DB, d dialect) error {
	q := queries{db: db, dialect: d, statements: new(atomic.Int64)}
	type titled struct{ ws, id, title string }
	var sessions []titled
	rows, err := db.Raw("SELECT workspace_id, id, title FROM sessions").Rows()
	if err != nil {
		return fmt.Errorf("index session titles: %w", err)
	}
	for rows.Next() {
		var s titled
		if err := rows.Scan(&s.ws, &s.id, &s.title); err != nil {
			rows.Close()
			return fmt.Errorf("index session titles: %w", err)
		}
		sessions = append(sessions, s)
	}
	rows.Close()
	for _, s := range sessions {
		if err := q.addTerms(db, s.ws, termsOf(s.id, forkengine.SearchTerms(s.title)), 1); err != nil {
			return err
		}
	}
	const page = 2000
	afterWS, afterID := "", ""
	for {
		var msgs []forkengine.Message
		rows, err := db.Raw(`SELECT workspace_id, id, session_id, content FROM messages
			WHERE (workspace_id, id) > (?, ?) ORDER BY workspace_id, id LIMIT `+strconv.Itoa(page), afterWS, afterID).Rows()
		if err != nil {
			return fmt.Errorf("index messages: %w", err)
		}
		for rows.Next() {
			var m forkengine.Message
			if err := rows.Scan(&m.WorkspaceID, &m.ID, &m.SessionID, &m.Content); err != nil {
				rows.Close()
				return fmt.Errorf("index messages: %w", err)
			}
			msgs = append(msgs, m)
		}
		rows.Close()
		if len(msgs) == 0 {
			return nil
		}
		if err := q.indexMessages(db, msgs); err != nil {
			return err
		}
		last := msgs[len(msgs)-1]
		afterWS, afterID = last.WorkspaceID, last.ID
	}
}

// filterClasses lists the session classes f keeps (by deletion, visibility and roots only).
func filterClasses(f forkengine.SessionFilter) []string {
	var classes []string
	for c := range 8 {
		deleted, visible, root := c&4 != 0, c&2 != 0, c&1 != 0
		if (deleted && !f.IncludeDeleted) || (f.Visible != nil && *f.Visible != visible) || (f.RootsOnly && !root) {
			continue
		}
		classes = append(classes, strconv.Itoa(c))
	}
	return classes
}

// termCounts returns, for each of terms, how many sessions of the classes f keeps have it, and
// how many index rows it has in all (every class: the rows a bounded read walks): sums over
// session_term_counts, one statement.
func (q queries) termCounts(ctx context.Context, ws string, f forkengine.SessionFilter, terms []string) (map[string]termCount, error) {
	rows, args := q.termRows(terms)
	query := "SELECT c.term, CAST(SUM(CASE WHEN c.class IN (" + strings.Join(filterClasses(f), ", ") +
		") THEN c.n ELSE 0 END) AS BIGINT), CAST(SUM(c.n) AS BIGINT) FROM session_term_counts c WHERE c.workspace_id = ? AND c.term IN (SELECT value FROM " +
		rows + ") GROUP BY c.term"
	out := map[string]termCount{}
	var term string
	var n termCount
	err := scanEach(ctx, q, query, append([]any{ws}, args...), []any{&term, &n.kept, &n.rows}, func() { out[term] = n })
	if err != nil {
		return nil, classify(err, "count search words")
	}
	return out, nil
}

// termCount is what session_term_counts says of one word: the sessions of a filter's classes
// that have it, and its index rows in all.
type termCount struct{ kept, rows int64 }

// searchPlan is how one search reads: the word whose rows it walks (the rarest, from the
// counts) and the others each row must also have. empty says a word matches no session, so
// the search matches none and reads nothing more.
type searchPlan struct {
	lead   string
	others []string
	// otherRows is how many index rows each of others has in every class (parallel to others).
	otherRows []int64
	leadN     int64
	// leadTotal is how many index rows the lead word has in every class (-1: not read): a read
	// of a bound at least that large cannot stop with rows left.
	leadTotal int64
	empty     bool
}

// planSearch chooses the word to walk. One word needs no counts: it is the walk.
func (q queries) planSearch(ctx context.Context, ws string, f forkengine.SessionFilter) (searchPlan, error) {
	if len(f.Search) == 1 {
		return searchPlan{lead: f.Search[0], leadN: -1, leadTotal: -1}, nil
	}
	counts, err := q.termCounts(ctx, ws, f, f.Search)
	if err != nil {
		return searchPlan{}, err
	}
	plan := searchPlan{leadN: -1}
	for _, t := range f.Search {
		n := counts[t].kept
		if n <= 0 {
			return searchPlan{empty: true}, nil
		}
		if plan.leadN < 0 || n < plan.leadN {
			plan.lead, plan.leadN, plan.leadTotal = t, n, counts[t].rows
		}
	}
	for _, t := range f.Search {
		if t != plan.lead {
			plan.others = append(plan.others, t)
			plan.otherRows = append(plan.otherRows, counts[t].rows)
		}
	}
	return plan, nil
}

// mergeRatio is how many times the lead word's index rows another word may have for a
// PostgreSQL search to read that word's rows as one ordered range merged with the lead's (a
// Merge Join: both ranges read in the index's order, a few hundred rows per buffer) rather than
// probe the key once per lead row (a Nested Loop: a descent of the b-tree, about 4 buffers, per
// row). Over the lead's rows the other word has about otherRows/leadRows times as many rows;
// a merge reads them all, a probe costs about as much CPU as 15-30 rows read in order (100,000
// sessions, docs/BENCHMARKS.md), so a word much denser than the lead ("half permille") is
// probed.
const mergeRatio = 16

// anyMerged reports whether some other word is merged.
func (p searchPlan) anyMerged(d dialect) bool {
	for i := range p.others {
		if p.merged(i, d) {
			return true
		}
	}
	return false
}

// merged reports whether other word i is read as a range merged with the lead's rows.
func (p searchPlan) merged(i int, d dialect) bool {
	return d.name == DriverPostgres && p.leadTotal > 0 && p.otherRows[i] <= mergeRatio*p.leadTotal
}

// searchWhere is the WHERE of a search over session_terms t joined to sessions s: the lead
// word's rows of f's classes, each with every other word, and f's kind and provider. Without
// withSessions the conditions on s are left out (a count without kind or provider reads no
// session row: an index row exists only for a stored session). cursor, scan and backward are
// the read's (leadRows).
//
// Each other word is a probe of session_terms' primary key by the row's full key, or on
// PostgreSQL, for a word not much denser than the lead (merged), a semi join with the word's
// rows from the lead's first row after the cursor on: the planner runs it as a Merge Join of two
// index-only scans in the key's order, which stops where the lead's rows end (for two 50% words
// at 100,000 sessions, about 100 buffers instead of 16,000 for 4,000 probes). The word's range is
// bounded by the lead's first row and the last the read may examine: without them a merge would
// start at the word's first row and a hash join (the planner's choice at some sizes) would read
// the word's rows to the end. On SQLite the unary + on
// o.session_id keeps the planner off session_terms_by_session (workspace_id, session_id), which
// it otherwise picks for the probe: the same answer at about four times the CPU at 100,000
// sessions (docs/BENCHMARKS.md). PostgreSQL has no unary + on text and picks the key.
func (p searchPlan) where(ws string, f forkengine.SessionFilter, d dialect, withSessions bool, cursor forkengine.PageCursor, scan int, backward bool) (string, []any) {
	// t holds the lead word's rows of ws only (leadRows): repeating that here as conditions on t
	// would only mislead PostgreSQL's estimate of t's rows (4,000 read as 32), which is what
	// chooses the merge.
	conds := []string{"t.class IN (" + strings.Join(filterClasses(f), ", ") + ")"}
	if withSessions {
		conds = append(conds, "s.workspace_id = t.workspace_id", "s.id = t.session_id")
	}
	var args []any
	probeID := "o.session_id"
	if d.name == DriverSQLite {
		probeID = "+o.session_id"
	}
	for i, o := range p.others {
		if p.merged(i, d) {
			first, firstArgs := p.leadKey(ws, cursor, 1, backward)
			from, to := ">=", "<="
			if backward {
				from, to = "<=", ">="
			}
			bounds := "(o.created_at_us, o.session_id) " + from + " (" + first + ")"
			boundArgs := firstArgs
			if scan > 0 {
				last, lastArgs := p.leadKey(ws, cursor, scan, backward)
				bounds += " AND (o.created_at_us, o.session_id) " + to + " (" + last + ")"
				boundArgs = append(boundArgs, lastArgs...)
			}
			conds = append(conds, `(t.created_at_us, t.session_id) IN (SELECT `+termKeyOfRow+` FROM session_terms o
				WHERE o.workspace_id = ? AND o.term = ? AND `+bounds+`)`)
			args = append(append(args, ws, o), boundArgs...)
			continue
		}
		conds = append(conds, `EXISTS (SELECT 1 FROM session_terms o WHERE o.workspace_id = t.workspace_id AND o.term = ?
			AND o.created_at_us = t.created_at_us AND `+probeID+` = t.session_id)`)
		args = append(args, o)
	}
	if f.Kind != "" {
		conds, args = append(conds, "s.kind = ?"), append(args, string(f.Kind))
	}
	if f.Provider != "" {
		conds, args = append(conds, "s.provider = ?"), append(args, f.Provider)
	}
	return strings.Join(conds, " AND "), args
}

// termKeyOfRow is the part of a session_terms row's key after its word (its session's place in
// the word's order), columns of the alias o.
var termKeyOfRow = termsTable.only("created_at_us", "session_id").list("o.")

// leadKey is a one-row subquery of the key of the last of the lead word's first n rows after
// the cursor (before it, backward; the last row when it has fewer): with n 1 where a merged
// word's range starts, with n the read's bound where it ends.
func (p searchPlan) leadKey(ws string, cursor forkengine.PageCursor, n int, backward bool) (string, []any) {
	rows, args := p.leadRows(ws, cursor, n, backward)
	order := "t.created_at_us DESC, t.session_id DESC"
	if backward {
		order = "t.created_at_us, t.session_id"
	}
	if n == 1 {
		return "SELECT t.created_at_us, t.session_id FROM " + rows, args
	}
	return "SELECT t.created_at_us, t.session_id FROM " + rows + " ORDER BY " + order + " LIMIT 1", args
}

// searchSessionColumns are the session columns a search page selects, after workspace_id.
var searchSessionColumns = sessionsTable.listAfterWorkspace("s.")

// leadRows is the derived table t of a search read: the lead word's index rows from the cursor
// on, in the index's order (descending when backward), at most scan of them (scan <= 0: all).
// The class filter, the other words, kind and provider are applied to these rows outside the
// LIMIT (searchPlan.where), so scan bounds every row the read examines, whatever they match.
func (p searchPlan) leadRows(ws string, cursor forkengine.PageCursor, scan int, backward bool) (string, []any) {
	cmp, order := ">", "created_at_us, session_id"
	if backward {
		cmp, order = "<", "created_at_us DESC, session_id DESC"
	}
	query := "SELECT workspace_id, term, created_at_us, session_id, class FROM session_terms WHERE workspace_id = ? AND term = ?"
	args := []any{ws, p.lead}
	if !cursor.IsZero() {
		query += " AND (created_at_us, session_id) " + cmp + " (?, ?)"
		args = append(args, micros(cursor.Time), cursor.ID)
	}
	query += " ORDER BY " + order
	if scan > 0 {
		query += " LIMIT " + strconv.Itoa(scan)
	}
	return "(" + query + ") t", args
}

// searchSessions reads a search page: up to n (<= 0: all) matching sessions strictly after the
// cursor in (CreatedAt, ID) order, or strictly before it newest first when backward. It walks
// the lead word's rows from the cursor in the index's order (CROSS JOIN keeps SQLite's planner
// from driving the join from sessions instead), at most scan of them (scan <= 0: no bound).
// When the page is short and the bound was what stopped it, one more statement reads the key
// of the last row examined, the page's Reached.
func (q queries) searchSessions(ctx context.Context, ws string, f forkengine.SessionFilter, cursor forkengine.PageCursor, n, scan int, backward bool) (forkengine.SearchPage, error) {
	page := forkengine.SearchPage{Sessions: make([]forkengine.Session, 0, min(max(n, 0), 1000))}
	plan, err := q.planSearch(ctx, ws, f)
	if err != nil || plan.empty {
		return page, err
	}
	rows, rowArgs := plan.leadRows(ws, cursor, scan, backward)
	where, args := plan.where(ws, f, q.dialect, true, cursor, scan, backward)
	order := "t.created_at_us, t.session_id"
	if backward {
		order = "t.created_at_us DESC, t.session_id DESC"
	}
	query := "SELECT " + searchSessionColumns + " FROM " + rows + " CROSS JOIN sessions s WHERE " + where + " ORDER BY " + order
	if n > 0 {
		query += " LIMIT " + strconv.Itoa(n)
	}
	if plan.anyMerged(q.dialect) && f.Kind == "" && f.Provider == "" {
		// The page's keys first, then their sessions: a hash join of the words (which the
		// planner may prefer to the merge) yields its rows unordered, and joining every match's
		// session before the sort and LIMIT read 10,000 buffers for a page of 51 in
		// TestPostgresSearchMergesWords. Sorting keys is cheap; n sessions are read.
		where, args = plan.where(ws, f, q.dialect, false, cursor, scan, backward)
		keys := "SELECT t.created_at_us, t.session_id FROM " + rows + " WHERE " + where + " ORDER BY " + order
		if n > 0 {
			keys += " LIMIT " + strconv.Itoa(n)
		}
		query = "SELECT " + searchSessionColumns + " FROM (" + keys + ") t CROSS JOIN sessions s WHERE s.workspace_id = ? AND s.id = t.session_id ORDER BY " + order
		args = append(args, ws)
	}
	err = eachOfWorkspace(ctx, q, sessionsTable, ws, query, append(rowArgs, args...), func(s *forkengine.Session) { page.Sessions = append(page.Sessions, *s) })
	if err != nil {
		return forkengine.SearchPage{}, classify(err, "search sessions")
	}
	if scan > 0 && (n <= 0 || len(page.Sessions) < n) && (plan.leadTotal < 0 || plan.leadTotal > int64(scan)) {
		if page.Reached, err = q.scanReached(ctx, plan, ws, cursor, scan, backward); err != nil {
			return forkengine.SearchPage{}, err
		}
	}
	return page, nil
}

// scanReached returns the key of the scan-th lead row from the cursor when a row follows it
// (the read stopped at its bound with rows left), else the zero cursor: an index-only walk of
// scan+1 keys.
func (q queries) scanReached(ctx context.Context, plan searchPlan, ws string, cursor forkengine.PageCursor, scan int, backward bool) (forkengine.PageCursor, error) {
	rows, args := plan.leadRows(ws, cursor, scan+1, backward)
	var keys []forkengine.PageCursor
	var us int64
	var id string
	err := scanEach(ctx, q, "SELECT t.created_at_us, t.session_id FROM "+rows+" LIMIT 2 OFFSET "+strconv.Itoa(scan-1), args,
		[]any{&us, &id}, func() { keys = append(keys, forkengine.PageCursor{Time: fromMicros(us), ID: id}) })
	if err != nil {
		return forkengine.PageCursor{}, classify(err, "search sessions")
	}
	if len(keys) < 2 {
		return forkengine.PageCursor{}, nil
	}
	return keys[0], nil
}

// SearchSessions reads a bounded search page (forkengine.Reader); f.Search must not be empty.
// Errors: as ListSessions.
func (q queries) SearchSessions(ctx context.Context, ws string, f forkengine.SessionFilter, from forkengine.PageCursor, limit, scan int, backward bool) (forkengine.SearchPage, error) {
	if len(f.Search) == 0 {
		return forkengine.SearchPage{}, fmt.Errorf("search sessions: no search words")
	}
	return q.searchSessions(ctx, ws, f, from, limit, scan, backward)
}

// CountSearch counts a search (forkengine.Reader): a one-word search without a kind or provider
// filter from session_term_counts (O(1), exact); otherwise the matches among the lead word's
// first scan rows (scan <= 0: all of them), a lower bound when the lead word has more rows
// (from the counts the plan read: no second walk of the rows). One statement after the plan's.
func (q queries) CountSearch(ctx context.Context, ws string, f forkengine.SessionFilter, scan int) (forkengine.SearchCount, error) {
	if len(f.Search) == 1 && f.Kind == "" && f.Provider == "" {
		counts, err := q.termCounts(ctx, ws, f, f.Search)
		return forkengine.SearchCount{N: int(counts[f.Search[0]].kept)}, err
	}
	plan, err := q.planSearch(ctx, ws, f)
	if err != nil || plan.empty {
		return forkengine.SearchCount{}, err
	}
	rows, rowArgs := plan.leadRows(ws, forkengine.PageCursor{}, scan, false)
	withSessions := f.Kind != "" || f.Provider != ""
	where, args := plan.where(ws, f, q.dialect, withSessions, forkengine.PageCursor{}, scan, false)
	from := rows
	if withSessions {
		from += " CROSS JOIN sessions s"
	}
	n, err := q.queryInt(ctx, "SELECT COUNT(*) FROM "+from+" WHERE "+where, append(rowArgs, args...)...)
	if err != nil {
		return forkengine.SearchCount{}, classify(err, "count a search")
	}
	out := forkengine.SearchCount{N: int(n)}
	if scan > 0 {
		if plan.leadTotal >= 0 {
			out.LowerBound = plan.leadTotal > int64(scan)
		} else { // one word narrowed by kind or provider: no counts were read
			reached, err := q.scanReached(ctx, plan, ws, forkengine.PageCursor{}, scan, false)
			if err != nil {
				return forkengine.SearchCount{}, err
			}
			out.LowerBound = !reached.IsZero()
		}
	}
	return out, nil
}

// countSearch counts the sessions a search matches, exactly (CountSessions): CountSearch
// without a bound, O(the rarest word's rows) for several words or a kind or provider filter (as
// the plain list's count by kind or provider is O(matching sessions)).
func (q queries) countSearch(ctx context.Context, ws string, f forkengine.SessionFilter) (int, error) {
	c, err := q.CountSearch(ctx, ws, f, 0)
	return c.N, err
}
