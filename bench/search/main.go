// Command search times session search pages (issue 27, item 13) on 100,000 sessions and
// 1,000,000 messages.
//
//	go run ./bench/search                           # SQLite in a temp dir, built fresh
//	go run ./bench/search -db /work/data/search.db  # keep the file; a later run reuses it
//	go run ./bench/search -db postgres://...        # an empty PostgreSQL database or schema
//	go run ./bench/search -db FILE -n 0             # build the dataset only
//	go run ./bench/search -db FILE -only 'half odd' # time the queries whose name has this text
//
// The dataset is written with store.DB.BulkLoad: the rows through the store's own writes in one
// transaction, the search index written in bulk before it commits (the same rows and counts
// the per-message writes leave, which TestBulkLoadMatchesUpdate checks). -per-message builds it through Update instead, indexing
// as production does (about 50 minutes on a shared 2-core machine).
//
// Each message has ten words of a 5,000-word vocabulary drawn Zipf-like (a few words are in most
// sessions, most in few), and marker words of known selectivity: "half" in every second
// session, "tenth", "percent", "permille" (1 in 1,000) and "unique" (one session); "odd" is in
// the sessions "half" is not. Titles are "Session <n> <topic>" with one of 20 topics (5% each).
// One session in 100 is soft-deleted, so the default filter has work to do.
//
// It calls the store readers the resolver calls with the arguments it passes: a page of 50
// reads 51 rows with SearchSessions, examining at most forkengine.SearchScanRows index rows, and
// its totalCount is CountSearch with the same bound; "page + count" is the two, what the
// explorer's search box asks. Every answer is checked against the dataset (the bounded page,
// where it stopped, the count and whether it is a lower bound), so a fast wrong answer cannot
// pass as a figure.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/store"
)

const (
	workspace       = "search"
	sessionCount    = 100_000
	messagesEach    = 10
	wordsEach       = 10
	vocabulary      = 5_000
	deletedEvery    = 100
	sessionsPerTx   = 500
	page            = 50
	uniqueSession   = 77_777
	deepCursorIndex = 90_000
)

var topics = []string{"deploy", "billing", "search", "login", "refactor", "flaky", "migration", "latency", "docs", "release",
	"cache", "upload", "export", "webhook", "invoice", "onboarding", "metrics", "alerts", "backup", "theme"}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func main() {
	dsn := flag.String("db", "", "SQLite file (reused if it holds the dataset) or postgres:// URL; empty: a temp file")
	iterations := flag.Int("n", 300, "timed calls per query; 0: build (or check) the dataset only")
	only := flag.String("only", "", "time only the queries whose name contains this text")
	scan := flag.Int("scan", forkengine.SearchScanRows, "index rows a page or count examines (the server's -search-scan-rows)")
	perMessage := flag.Bool("per-message", false, "build the dataset through Update, indexing as production does, not BulkLoad")
	flag.Parse()
	if err := run(*dsn, *iterations, *only, *scan, *perMessage, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(dsn string, iterations int, only string, scan int, perMessage bool, out io.Writer) error {
	ctx := context.Background()
	if dsn == "" {
		dir, err := os.MkdirTemp("", "forkgraph-search-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		dsn = filepath.Join(dir, "search.db")
	}
	db, err := store.Open(ctx, store.Config{DSN: dsn, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	defer db.Close()
	if err := ensureDataset(ctx, db, perMessage, out); err != nil {
		return err
	}
	if iterations <= 0 {
		return nil
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(out, "driver %s, %d calls per query, page %d, scan bound %d, load average %s\n", db.Driver(), iterations, page, scan,
		strings.Join(strings.Fields(string(load))[:3], " "))
	return report(ctx, db, iterations, only, scan, out)
}

func sessionID(i int) string { return fmt.Sprintf("s%06d", i) }

// markers are the marker words session i says, with the rule that gives their selectivity.
func markers(i int) []string {
	var m []string
	if i%2 == 0 {
		m = append(m, "half")
	} else {
		m = append(m, "odd")
	}
	for _, r := range []struct {
		word  string
		every int
	}{{"tenth", 10}, {"percent", 100}, {"permille", 1000}} {
		if i%r.every == 0 {
			m = append(m, r.word)
		}
	}
	if i == uniqueSession {
		m = append(m, "unique")
	}
	return m
}

func deleted(i int) bool { return i%deletedEvery == deletedEvery-1 }

// zipf draws vocabulary words with weight 1/rank^1.1: "w0" is in most sessions, "w4999" in few.
type zipf struct{ cdf []float64 }

func newZipf() zipf {
	z := zipf{cdf: make([]float64, vocabulary)}
	sum := 0.0
	for r := range vocabulary {
		sum += 1 / math.Pow(float64(r+1), 1.1)
		z.cdf[r] = sum
	}
	for r := range z.cdf {
		z.cdf[r] /= sum
	}
	return z
}

func (z zipf) word(rng *rand.Rand) string {
	r, _ := slices.BinarySearch(z.cdf, rng.Float64())
	return fmt.Sprintf("w%d", min(r, vocabulary-1))
}

// ensureDataset builds the dataset unless the database already holds it.
func ensureDataset(ctx context.Context, db *store.DB, perMessage bool, out io.Writer) error {
	n, err := db.CountSessions(ctx, workspace, forkengine.SessionFilter{IncludeDeleted: true})
	if err != nil {
		return err
	}
	if n == sessionCount {
		fmt.Fprintf(out, "reusing the dataset (%d sessions)\n", n)
		return nil
	}
	if n != 0 {
		return fmt.Errorf("workspace %q holds %d sessions, neither 0 nor the dataset", workspace, n)
	}
	start := time.Now()
	rng := rand.New(rand.NewPCG(27, 13))
	z := newZipf()
	var messages int
	progress := func(done int) {
		if done%20_000 == 0 {
			fmt.Fprintf(out, "%d sessions written (%s)\n", done, time.Since(start).Round(time.Second))
		}
	}
	if perMessage {
		for first := 0; first < sessionCount; first += sessionsPerTx {
			err := db.Update(ctx, func(tx forkengine.Tx) error {
				n, err := writeSessions(ctx, tx, first, min(first+sessionsPerTx, sessionCount), rng, z)
				messages += n
				return err
			})
			if err != nil {
				return fmt.Errorf("sessions from %d: %w", first, err)
			}
			progress(first + sessionsPerTx)
		}
	} else {
		// One transaction: the dataset is there whole, indexed, or not at all.
		err := db.BulkLoad(ctx, func(tx forkengine.Tx) error {
			for first := 0; first < sessionCount; first += sessionsPerTx {
				n, err := writeSessions(ctx, tx, first, min(first+sessionsPerTx, sessionCount), rng, z)
				if err != nil {
					return fmt.Errorf("sessions from %d: %w", first, err)
				}
				messages += n
				progress(first + sessionsPerTx)
			}
			fmt.Fprintf(out, "rows written (%s); indexing\n", time.Since(start).Round(time.Second))
			return nil
		})
		if err != nil {
			return err
		}
	}
	if db.Driver() == store.DriverSQLite {
		if err := db.Checkpoint(ctx); err != nil {
			return err
		}
	}
	took := time.Since(start)
	how := "BulkLoad"
	if perMessage {
		how = "per-message writes"
	}
	fmt.Fprintf(out, "built %d sessions and %d messages in %s (%.0f messages/s, %s)\n",
		sessionCount, messages, took.Round(time.Second), float64(messages)/took.Seconds(), how)
	return nil
}

// writeSessions writes sessions [first, last) with their turn and messages, soft-deleting
// those deleted says, and returns how many messages it wrote.
func writeSessions(ctx context.Context, tx forkengine.Tx, first, last int, rng *rand.Rand, z zipf) (int, error) {
	var msgs []forkengine.Message
	var turns []forkengine.Turn
	for i := first; i < last; i++ {
		at := epoch.Add(time.Duration(i) * time.Millisecond)
		s := forkengine.Session{WorkspaceID: workspace, ID: sessionID(i), Kind: forkengine.SessionRoot, Provider: "sim",
			ProviderSessionID: "p-" + sessionID(i), Title: fmt.Sprintf("Session %d %s", i, topics[i%len(topics)]),
			Visible: true, CreatedAt: at, UpdatedAt: at}
		if err := tx.UpsertSession(ctx, s); err != nil {
			return 0, err
		}
		turn := forkengine.Turn{WorkspaceID: workspace, SessionID: s.ID, ID: s.ID + "-t1", Sequence: 1,
			Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, Origin: "user", StartedAt: at, UpdatedAt: at}
		turns = append(turns, turn)
		for m := range messagesEach {
			words := make([]string, 0, wordsEach+4)
			for range wordsEach {
				words = append(words, z.word(rng))
			}
			if m == messagesEach-1 {
				words = append(words, markers(i)...)
			}
			msgs = append(msgs, forkengine.Message{WorkspaceID: workspace, SessionID: s.ID, TurnID: turn.ID,
				ID: fmt.Sprintf("%s-m%d", s.ID, m), Role: forkengine.RoleUser, Content: strings.Join(words, " ") + ".", CreatedAt: at})
		}
	}
	if err := tx.InsertTurns(ctx, turns); err != nil {
		return 0, err
	}
	if _, err := tx.InsertMessages(ctx, msgs); err != nil {
		return 0, err
	}
	for i := first; i < last; i++ {
		if deleted(i) {
			if err := tx.SoftDeleteSession(ctx, workspace, sessionID(i), epoch); err != nil {
				return 0, err
			}
		}
	}
	return len(msgs), nil
}

// search is one searched text and the sessions it must find (by index), in list order.
type search struct {
	text  string
	match func(i int) bool
	note  string
}

// docHas reports whether session i's document (title and messages) has word, for the marker
// and topic words the searches use.
func docHas(word string, i int) bool {
	return slices.Contains(markers(i), word) || topics[i%len(topics)] == word
}

func has(word string) func(int) bool {
	return func(i int) bool { return slices.Contains(markers(i), word) }
}

func searches() []search {
	return []search{
		{"half", has("half"), "50% of sessions"},
		{"tenth", has("tenth"), "10%"},
		{"percent", has("percent"), "1%"},
		{"permille", has("permille"), "0.1%"},
		{"unique", has("unique"), "one session"},
		{"deploy", func(i int) bool { return i%len(topics) == 0 }, "a title word, 5%"},
		{"half tenth", func(i int) bool { return has("half")(i) && has("tenth")(i) }, "two words, 10% together; walks tenth"},
		{"deploy percent", func(i int) bool { return i%len(topics) == 0 && has("percent")(i) }, "title and message word, 1% together"},
		{"half odd", func(int) bool { return false }, "two 50% words never together: the worst case"},
		{"absent", func(int) bool { return false }, "no session"},
	}
}

// model is what the store must answer for one search, computed from the dataset's rules: the
// word whose index rows a read walks (the rarest among live sessions, the first in sorted
// order on a tie, as the store plans it) and the live matches.
type model struct {
	s     search
	terms []string
	lead  string
	rows  []int // the sessions with the lead word, deleted ones too, in list order
	live  int   // live matches
}

func newModel(s search) model {
	terms, err := forkengine.ParseSearch(s.text)
	if err != nil {
		panic(err)
	}
	m := model{s: s, terms: terms}
	best := -1
	for _, t := range terms {
		n := 0
		for i := range sessionCount {
			if docHas(t, i) && !deleted(i) {
				n++
			}
		}
		if best < 0 || n < best {
			m.lead, best = t, n
		}
	}
	if best == 0 && len(terms) > 1 {
		return m // a word of no session: nothing is read
	}
	for i := range sessionCount {
		if docHas(m.lead, i) {
			m.rows = append(m.rows, i)
		}
		if s.match(i) && !deleted(i) {
			m.live++
		}
	}
	return m
}

// page is what SearchSessions must return: the first limit live matches among the first scan
// lead rows after (before, backward) session index from (-1: no cursor), and where it stopped
// (-1: nowhere).
func (m model) page(from, limit, scan int, backward bool) (ids []string, reached int) {
	var rows []int
	for _, i := range m.rows {
		if from < 0 || (!backward && i > from) || (backward && i < from) {
			rows = append(rows, i)
		}
	}
	if backward {
		slices.Reverse(rows)
	}
	examined := rows
	if scan > 0 && len(rows) > scan {
		examined = rows[:scan]
	}
	for _, i := range examined {
		if m.s.match(i) && !deleted(i) && len(ids) < limit {
			ids = append(ids, sessionID(i))
		}
	}
	reached = -1
	if len(ids) < limit && len(examined) < len(rows) {
		reached = examined[len(examined)-1]
	}
	return ids, reached
}

// count is what CountSearch must return.
func (m model) count(scan int) forkengine.SearchCount {
	if len(m.terms) == 1 || scan <= 0 || len(m.rows) <= scan {
		return forkengine.SearchCount{N: m.live}
	}
	n := 0
	for _, i := range m.rows[:scan] {
		if m.s.match(i) && !deleted(i) {
			n++
		}
	}
	return forkengine.SearchCount{N: n, LowerBound: true}
}

// query is one timed call; it checks its answer against the model.
type query struct {
	name string
	call func(ctx context.Context) error
}

func queries(db *store.DB, scan int) []query {
	var out []query
	deep := forkengine.PageCursor{Time: epoch.Add(deepCursorIndex * time.Millisecond), ID: sessionID(deepCursorIndex)}
	for _, s := range searches() {
		m := newModel(s)
		f := forkengine.SessionFilter{Search: m.terms}
		read := func(ctx context.Context, cursor forkengine.PageCursor, from int, backward bool) error {
			got, err := db.SearchSessions(ctx, workspace, f, cursor, page+1, scan, backward)
			if err != nil {
				return err
			}
			ids, reached := m.page(from, page+1, scan, backward)
			return same(got, ids, reached)
		}
		name := fmt.Sprintf("%q (%s, %d sessions)", s.text, s.note, m.live)
		out = append(out,
			query{name + ": first page + count", func(ctx context.Context) error {
				got, err := db.SearchSessions(ctx, workspace, f, forkengine.PageCursor{}, page+1, scan, false)
				if err != nil {
					return err
				}
				ids, reached := m.page(-1, page+1, scan, false)
				if err := same(got, ids, reached); err != nil {
					return err
				}
				// As the resolver: a short first page is its own count.
				n, known := got.CountOfFirstPage(f, page, forkengine.PageCursor{}, false)
				if !known {
					n, err = db.CountSearch(ctx, workspace, f, scan)
				}
				if err != nil {
					return err
				}
				if want := m.count(scan); n != want {
					return fmt.Errorf("counted %+v, want %+v", n, want)
				}
				return nil
			}},
			query{name + ": page after session 90,000", func(ctx context.Context) error {
				return read(ctx, deep, deepCursorIndex, false)
			}},
			query{name + ": last page (backward)", func(ctx context.Context) error {
				return read(ctx, forkengine.PageCursor{}, -1, true)
			}},
		)
	}
	return out
}

func same(got forkengine.SearchPage, want []string, reached int) error {
	ids := make([]string, len(got.Sessions))
	for i, s := range got.Sessions {
		ids[i] = s.ID
	}
	if !slices.Equal(ids, want) {
		return fmt.Errorf("got %d sessions %v..., want %d %v...", len(ids), head(ids), len(want), head(want))
	}
	wantReached := forkengine.PageCursor{}
	if reached >= 0 {
		wantReached = forkengine.PageCursor{Time: epoch.Add(time.Duration(reached) * time.Millisecond), ID: sessionID(reached)}
	}
	if got.Reached.ID != wantReached.ID || !got.Reached.Time.Equal(wantReached.Time) {
		return fmt.Errorf("stopped at %v, want %v", got.Reached, wantReached)
	}
	return nil
}

func head(ids []string) []string { return ids[:min(3, len(ids))] }

// report runs each query a few times untimed, then iterations times timed, and prints p50, p99
// and max per query, and the statements one call ran.
func report(ctx context.Context, db *store.DB, iterations int, only string, scan int, out io.Writer) error {
	fmt.Fprintf(out, "| search | p50 | p99 | max | cpu/call | statements/call |\n|---|---|---|---|---|---|\n")
	for _, q := range queries(db, scan) {
		if !strings.Contains(q.name, only) {
			continue
		}
		for range 5 {
			if err := q.call(ctx); err != nil {
				return fmt.Errorf("%s: %w", q.name, err)
			}
		}
		before, cpuBefore := db.Statements(), cpuTime()
		took := make([]time.Duration, iterations)
		for i := range took {
			start := time.Now()
			if err := q.call(ctx); err != nil {
				return fmt.Errorf("%s: %w", q.name, err)
			}
			took[i] = time.Since(start)
		}
		statements := float64(db.Statements()-before) / float64(iterations)
		cpu := (cpuTime() - cpuBefore) / time.Duration(iterations)
		slices.Sort(took)
		fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %.0f |\n", q.name, ms(took[len(took)/2]),
			ms(took[min(len(took)-1, len(took)*99/100)]), ms(took[len(took)-1]), ms(cpu), statements)
	}
	return nil
}

// cpuTime is the process's CPU time so far (user and system): on SQLite the engine's work
// too, on PostgreSQL the client's only.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
