package store

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/forkgraph/forkgraph/forkengine"
)

// BulkLoad runs fn as one transaction, as Update does (a load that fails writes nothing), with the search index written once at
// its end instead of as fn writes: UpsertSession and InsertMessages note the sessions they touch,
// and before the commit each touched session's index rows are rebuilt from what is stored (its
// title and the messages it holds itself), in key order, many rows per statement, with their
// word counts added in one statement per workspace. Everything else (rows, counters, session and
// turn counts, triggers) is written as Update writes it, so the database ends as the same writes
// through Update leave it (TestBulkLoadMatchesUpdate); it is for loading many sessions at once
// (bench/search builds 100,000 sessions and 1,000,000 messages with it), where indexing message
// by message costs a statement per session of each batch and dirties the index page by page.
//
// A touched session's rows are deleted and written again whole, so a session indexed before the
// load (by Update) comes out as it would have: the cost is its whole document, not what fn added.
func (db *DB) BulkLoad(ctx context.Context, fn func(tx forkengine.Tx) error) error {
	var pending []cachedSnapshot
	err := db.transaction(ctx, func(gtx *gorm.DB) error {
		pending = pending[:0]
		tx := &txn{queries: queries{db: gtx, dialect: db.dialect, snapshots: db.snapshots, pending: &pending,
			statements: db.statements}, bulk: &bulkIndex{}}
		if err := tx.pauseSessionCounts(ctx); err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			return err
		}
		if err := tx.flushBulkIndex(ctx); err != nil {
			return err
		}
		return tx.recountSessions(ctx)
	})
	if err == nil {
		db.snapshots.put(pending...)
	}
	return err
}

// bulkIndex is what a BulkLoad transaction has to index: the sessions it touched, per workspace;
// and how many rows it wrote.
type bulkIndex struct {
	touched map[string]map[string]bool
	rows    int
}

// bulkAnalyzeAt are the rows a PostgreSQL bulk load has written when it analyzes the tables it
// writes. The foreign-key checks of its rows are planned once per connection, when the tables
// they look up hold few rows (a fresh database: none), and on PostgreSQL 15 that plan read
// turns by an index on workspace_id alone: every message checked against every turn of its
// workspace, each insert of 500 messages 1-2 s at 30,000 sessions. ANALYZE counts the
// transaction's own rows and invalidates the cached plans, so the checks are planned again by
// the key.
var bulkAnalyzeAt = []int{2_000, 20_000, 200_000}

// wrote counts n rows a bulk load wrote and analyzes its tables when the count passes a mark.
func (tx *txn) bulkWrote(ctx context.Context, n int) error {
	before := tx.bulk.rows
	tx.bulk.rows += n
	if tx.dialect.name != DriverPostgres {
		return nil
	}
	for _, mark := range bulkAnalyzeAt {
		if before < mark && tx.bulk.rows >= mark {
			if _, err := tx.execFixed(tx.with(ctx), "ANALYZE sessions, turns, messages"); err != nil {
				return classify(err, "analyze during a bulk load")
			}
			return nil
		}
	}
	return nil
}

func (b *bulkIndex) touch(ws, session string) {
	if b.touched == nil {
		b.touched = map[string]map[string]bool{}
	}
	if b.touched[ws] == nil {
		b.touched[ws] = map[string]bool{}
	}
	b.touched[ws][session] = true
}

// bulkTermPlaceholders are one row's of a bulk load's insert into session_terms: every column,
// bound in termsTable's order.
var bulkTermPlaceholders = placeholders(len(termsTable.names))

// bulkTermRow is one row of session_terms as a bulk load writes it.
type bulkTermRow struct {
	term      string
	createdAt int64
	session   string
	class     int64
	sources   int
}

// bulkTermBatch bounds the rows of one insert (6 parameters each), bulkCountBatch the words of
// one count statement (3 each).
var bulkTermBatch, bulkCountBatch = 1000, 10_000

// On PostgreSQL a bulk load counts its sessions once at the end instead of by trigger: the row
// triggers bump one session_counts row per session, and in one transaction every bump adds a
// version of that row that no one can prune, which the next bump's ON CONFLICT walks: at 40,000
// sessions perf put three quarters of the load's server time there, each session slower than
// the one before. pauseSessionCounts disables the two triggers for the transaction (DDL, so it
// is undone with a failed load; other writers of sessions wait for the commit) and
// recountSessions counts session_counts again from the sessions, every workspace, as migration
// 9's backfill does, then enables them. SQLite's triggers write in place and stay.
var sessionCountTriggers = []string{"sessions_counted", "sessions_recounted"}

func (tx *txn) pauseSessionCounts(ctx context.Context) error {
	if tx.dialect.name != DriverPostgres {
		return nil
	}
	// Building the index of millions of rows takes longer than the statement timeout an API
	// read is given; the load is bounded by its context instead.
	if _, err := tx.execFixed(tx.with(ctx), "SET LOCAL statement_timeout = 0"); err != nil {
		return classify(err, "prepare a bulk load")
	}
	for _, trigger := range sessionCountTriggers {
		if _, err := tx.execFixed(tx.with(ctx), "ALTER TABLE sessions DISABLE TRIGGER "+trigger); err != nil {
			return classify(err, "prepare the session counts for a bulk load")
		}
	}
	return nil
}

func (tx *txn) recountSessions(ctx context.Context) error {
	if tx.dialect.name != DriverPostgres {
		return nil
	}
	stmts := []string{"DELETE FROM session_counts", sessionCountsBackfill}
	for _, trigger := range sessionCountTriggers {
		stmts = append(stmts, "ALTER TABLE sessions ENABLE TRIGGER "+trigger)
	}
	for _, stmt := range stmts {
		if _, err := tx.execFixed(tx.with(ctx), stmt); err != nil {
			return classify(err, "count the sessions of a bulk load")
		}
	}
	return nil
}

// bulkRebuildRows is how many index rows a PostgreSQL bulk load writes before it writes them
// into session_terms without its indexes and builds them again after (a variable for tests).
// Inserted into the indexes, rows of thousands of words each land on a leaf page of their own:
// 7 million rows took most of an hour on a shared machine, where CREATE INDEX sorts them once.
var bulkRebuildRows = 200_000

// dropTermIndexes takes session_terms for the transaction (ACCESS EXCLUSIVE: other writers and
// readers wait for the commit, which they would for the load anyway) and drops its indexes;
// createTermIndexes builds the same ones again (migration 20's definitions, the key as
// migration 30 left it) and analyzes the table, whose statistics a load of this size makes
// stale.
func (tx *txn) dropTermIndexes(db *gorm.DB) error {
	for _, stmt := range []string{"LOCK TABLE session_terms IN ACCESS EXCLUSIVE MODE",
		"ALTER TABLE session_terms DROP CONSTRAINT session_terms_pkey", "DROP INDEX session_terms_by_session"} {
		if _, err := tx.execFixed(db, stmt); err != nil {
			return classify(err, "prepare the search index for a bulk load")
		}
	}
	return nil
}

func (tx *txn) createTermIndexes(db *gorm.DB) error {
	for _, stmt := range []string{"ALTER TABLE session_terms ADD CONSTRAINT session_terms_pkey " + sessionTermsKeyPostgres,
		sessionTermsBySession, "ANALYZE session_terms"} {
		if _, err := tx.execFixed(db, stmt); err != nil {
			return classify(err, "rebuild the search index after a bulk load")
		}
	}
	return nil
}

// flushBulkIndex rebuilds the index rows of every session the transaction touched.
func (tx *txn) flushBulkIndex(ctx context.Context) error {
	for _, ws := range slices.Sorted(maps.Keys(tx.bulk.touched)) {
		ids := slices.Sorted(maps.Keys(tx.bulk.touched[ws]))
		var rows []bulkTermRow
		for chunk := range slices.Chunk(ids, tx.dialect.maxParams) {
			got, err := tx.bulkDocuments(ctx, ws, chunk)
			if err != nil {
				return err
			}
			rows = append(rows, got...)
		}
		db := tx.with(ctx)
		rebuild := tx.dialect.name == DriverPostgres && len(rows) >= bulkRebuildRows
		if !rebuild { // in the index's key order: each statement appends to a few runs of the b-tree
			slices.SortFunc(rows, func(a, b bulkTermRow) int {
				return cmp.Or(strings.Compare(a.term, b.term), cmp.Compare(a.createdAt, b.createdAt), strings.Compare(a.session, b.session))
			})
		} else if err := tx.dropTermIndexes(db); err != nil {
			return err
		}
		added := map[termClass]int64{}
		for batch := range slices.Chunk(rows, bulkTermBatch) {
			var b strings.Builder
			b.WriteString(insertTermsSQL + " VALUES ")
			args := make([]any, 0, 6*len(batch))
			for i, r := range batch {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(bulkTermPlaceholders)
				args = append(args, ws, r.term, r.createdAt, r.session, r.class, r.sources)
				added[termClass{r.term, r.class}]++
			}
			if _, err := tx.execFixed(db, b.String(), args...); err != nil {
				return classify(err, "index %d words of a bulk load", len(batch))
			}
		}
		if rebuild {
			if err := tx.createTermIndexes(db); err != nil {
				return err
			}
		}
		if len(added) == 0 {
			continue
		}
		// In key order, at most bulkCountBatch words a statement (PostgreSQL binds 3 parameters
		// a word, and allows 65,535).
		keys := slices.SortedFunc(maps.Keys(added), func(a, b termClass) int {
			return cmp.Or(strings.Compare(a.term, b.term), cmp.Compare(a.class, b.class))
		})
		for chunk := range slices.Chunk(keys, bulkCountBatch) {
			part := make(map[termClass]int64, len(chunk))
			for _, k := range chunk {
				part[k] = added[k]
			}
			if err := tx.bumpTermCounts(db, ws, part); err != nil {
				return classify(err, "count %d words of a bulk load", len(part))
			}
		}
	}
	return nil
}

// bulkDocuments deletes the index rows of the sessions ids (the delete triggers take them from
// the counts) and returns the rows their stored titles and messages give.
func (tx *txn) bulkDocuments(ctx context.Context, ws string, ids []string) ([]bulkTermRow, error) {
	in := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ") + ")"
	args := make([]any, 0, len(ids)+1)
	args = append(args, ws)
	for _, id := range ids {
		args = append(args, id)
	}
	if _, err := tx.execFixed(tx.with(ctx), "DELETE FROM session_terms WHERE workspace_id = ? AND session_id IN "+in, args...); err != nil {
		return nil, classify(err, "unindex %d sessions of a bulk load", len(ids))
	}
	type document struct {
		createdAt int64
		class     int64
		words     map[string]int // word: its sources (1 the title, 2 a message)
	}
	docs := map[string]*document{}
	var id, text string
	var createdAt, class int64
	err := scanEach(ctx, tx.queries, "SELECT s.id, s.title, s.created_at_us, "+sessionClassSQL("s")+
		" FROM sessions s WHERE s.workspace_id = ? AND s.id IN "+in, args, []any{&id, &text, &createdAt, &class}, func() {
		d := &document{createdAt: createdAt, class: class, words: map[string]int{}}
		for _, w := range forkengine.SearchTerms(text) {
			d.words[w] = 1
		}
		docs[id] = d
	})
	if err != nil {
		return nil, classify(err, "read the titles of %d sessions of a bulk load", len(ids))
	}
	// A session's messages are those of its turns (messages_by_turn finds them; there is no
	// index by session), driven from the ids: CROSS JOIN keeps SQLite in this order.
	idRows, idArgs := tx.termRows(ids)
	err = scanEach(ctx, tx.queries, "SELECT m.session_id, m.content FROM "+idRows+` CROSS JOIN turns t CROSS JOIN messages m
		WHERE t.workspace_id = ? AND t.session_id = w.value AND m.workspace_id = t.workspace_id AND m.turn_id = t.id`,
		append(idArgs, ws), []any{&id, &text}, func() {
			d := docs[id]
			if d == nil { // a message whose session is not stored: InsertMessages indexes nothing for it either
				return
			}
			for _, w := range forkengine.SearchTerms(text) {
				d.words[w] |= 2
			}
		})
	if err != nil {
		return nil, classify(err, "read the messages of %d sessions of a bulk load", len(ids))
	}
	var rows []bulkTermRow
	for id, d := range docs {
		for w, sources := range d.words {
			rows = append(rows, bulkTermRow{term: w, createdAt: d.createdAt, session: id, class: d.class, sources: sources})
		}
	}
	return rows, nil
}
