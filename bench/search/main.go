// Command search times session search pages (issue 27, item 13) on 100,000 sessions and
// 1,000,000 messages, built through the store's own writes (so the index is maintained as it is
// in production: every title and message indexed by UpsertSession and InsertMessages).
//
//	go run ./bench/search                      # SQLite in a temp dir, built fresh
//	go run ./bench/search -db /tmp/search.db   # keep the file; a later run reuses it
//	go run ./bench/search -db postgres://...   # an empty PostgreSQL database or schema
//
// Each message has ten words of a 5,000-word vocabulary drawn Zipf-like (a few words are in most
// sessions, most in few), and marker words of known selectivity: "half" in every second
// session, "tenth", "percent", "permille" (1 in 1,000) and "unique" (one session); "odd" is in
// the sessions "half" is not. Titles are "Session <n> <topic>" with one of 20 topics (5% each).
// One session in 100 is soft-deleted, so the default filter has work to do.
//
// Like bench/scale it calls the store readers the resolver calls with the arguments it passes:
// a page of 50 reads 51 rows, and its totalCount is CountSessions; "page + count" is the two,
// what the explorer's search box asks. Every answer is checked against the dataset, so a fast
// wrong answer cannot pass as a figure.
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
	iterations := flag.Int("n", 300, "timed calls per query")
	flag.Parse()
	if err := run(*dsn, *iterations, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(dsn string, iterations int, out io.Writer) error {
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
	if err := ensureDataset(ctx, db, out); err != nil {
		return err
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(out, "driver %s, %d calls per query, page %d, load average %s\n", db.Driver(), iterations, page,
		strings.Join(strings.Fields(string(load))[:3], " "))
	return report(ctx, db, iterations, out)
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
func ensureDataset(ctx context.Context, db *store.DB, out io.Writer) error {
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
	for first := 0; first < sessionCount; first += sessionsPerTx {
		err := db.Update(ctx, func(tx forkengine.Tx) error {
			var msgs []forkengine.Message
			var turns []forkengine.Turn
			for i := first; i < min(first+sessionsPerTx, sessionCount); i++ {
				at := epoch.Add(time.Duration(i) * time.Millisecond)
				s := forkengine.Session{WorkspaceID: workspace, ID: sessionID(i), Kind: forkengine.SessionRoot, Provider: "sim",
					ProviderSessionID: "p-" + sessionID(i), Title: fmt.Sprintf("Session %d %s", i, topics[i%len(topics)]),
					Visible: true, CreatedAt: at, UpdatedAt: at}
				if err := tx.UpsertSession(ctx, s); err != nil {
					return err
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
				return err
			}
			if _, err := tx.InsertMessages(ctx, msgs); err != nil {
				return err
			}
			messages += len(msgs)
			for i := first; i < min(first+sessionsPerTx, sessionCount); i++ {
				if deleted(i) {
					if err := tx.SoftDeleteSession(ctx, workspace, sessionID(i), epoch); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("sessions from %d: %w", first, err)
		}
	}
	if db.Driver() == store.DriverSQLite {
		if err := db.Checkpoint(ctx); err != nil {
			return err
		}
	}
	took := time.Since(start)
	fmt.Fprintf(out, "built %d sessions and %d messages in %s (%.0f messages/s, indexed as they were written)\n",
		sessionCount, messages, took.Round(time.Second), float64(messages)/took.Seconds())
	return nil
}

// search is one searched text and the sessions it must find (by index), in list order.
type search struct {
	text  string
	match func(i int) bool
	note  string
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
		{"half odd", func(int) bool { return false }, "two 50% words never together: the worst case, walks 50,000 rows"},
		{"absent", func(int) bool { return false }, "no session"},
	}
}

// expected is the ids of the live sessions a search must find, in list order.
func expected(s search) []string {
	var ids []string
	for i := range sessionCount {
		if s.match(i) && !deleted(i) {
			ids = append(ids, sessionID(i))
		}
	}
	return ids
}

// query is one timed call; it checks its answer against want.
type query struct {
	name string
	call func(ctx context.Context) error
}

func queries(db *store.DB) []query {
	var out []query
	deep := forkengine.PageCursor{Time: epoch.Add(deepCursorIndex * time.Millisecond), ID: sessionID(deepCursorIndex)}
	for _, s := range searches() {
		terms, err := forkengine.ParseSearch(s.text)
		if err != nil {
			panic(err)
		}
		f := forkengine.SessionFilter{Search: terms}
		want := expected(s)
		firstPage := want[:min(page+1, len(want))]
		var deepWant []string
		for _, id := range want {
			if id > sessionID(deepCursorIndex) {
				deepWant = append(deepWant, id)
			}
		}
		deepWant = deepWant[:min(page+1, len(deepWant))]
		name := fmt.Sprintf("%q (%s, %d sessions)", s.text, s.note, len(want))
		out = append(out,
			query{name + ": first page + count", func(ctx context.Context) error {
				rows, err := db.ListSessions(ctx, workspace, f, forkengine.PageCursor{}, page+1)
				if err := same(err, rows, firstPage); err != nil {
					return err
				}
				n, err := db.CountSessions(ctx, workspace, f)
				return count(err, n, len(want))
			}},
			query{name + ": page after session 90,000", func(ctx context.Context) error {
				rows, err := db.ListSessions(ctx, workspace, f, deep, page+1)
				return same(err, rows, deepWant)
			}},
			query{name + ": last page (backward)", func(ctx context.Context) error {
				rows, err := db.ListSessionsBefore(ctx, workspace, f, forkengine.PageCursor{}, page+1)
				last := slices.Clone(want[max(0, len(want)-page-1):])
				slices.Reverse(last)
				return same(err, rows, last)
			}},
		)
	}
	return out
}

func same(err error, rows []forkengine.Session, want []string) error {
	if err != nil {
		return err
	}
	got := make([]string, len(rows))
	for i, s := range rows {
		got[i] = s.ID
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("got %d sessions %v..., want %d %v...", len(got), head(got), len(want), head(want))
	}
	return nil
}

func head(ids []string) []string { return ids[:min(3, len(ids))] }

func count(err error, got, want int) error {
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("counted %d, want %d", got, want)
	}
	return nil
}

// report runs each query a few times untimed, then iterations times timed, and prints p50, p99
// and max per query.
func report(ctx context.Context, db *store.DB, iterations int, out io.Writer) error {
	fmt.Fprintf(out, "| search | p50 | p99 | max |\n|---|---|---|---|\n")
	for _, q := range queries(db) {
		for range 5 {
			if err := q.call(ctx); err != nil {
				return fmt.Errorf("%s: %w", q.name, err)
			}
		}
		took := make([]time.Duration, iterations)
		for i := range took {
			start := time.Now()
			if err := q.call(ctx); err != nil {
				return fmt.Errorf("%s: %w", q.name, err)
			}
			took[i] = time.Since(start)
		}
		slices.Sort(took)
		fmt.Fprintf(out, "| %s | %s | %s | %s |\n", q.name, ms(took[len(took)/2]),
			ms(took[min(len(took)-1, len(took)*99/100)]), ms(took[len(took)-1]))
	}
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
