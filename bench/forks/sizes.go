package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/forkgraph/forkgraph/internal/multiinstance"
)

// The transcript-size axis (issue 24): for each size, a fresh database holds one source whose
// transcript has that much content, and one client forks it through its last turn -size-forks
// times in a row (after one warm-up fork), waiting for COMMITTED and acknowledging each. It
// reports fork → COMMITTED (forkSession sent until a poll sees COMMITTED) p50 and max, database
// bytes per fork (SQLite: the checkpointed file before and after, as the loop above; PostgreSQL:
// the sum of pg_total_relation_size over the schema's tables) and the server's RSS growth during
// a fork (VmHWM after the fork minus VmRSS before it, the peak reset through clear_refs before
// each fork, so a fork's transient allocations count, not only what it keeps).
//
// The transcript is reported through the API as a runtime would, in appends of up to
// seedAppendBytes (the server runs with a -max-body that fits them): a 1 GB transcript is some
// seventy appends, each one transaction, instead of a million requests.

// sizeCase is one transcript size and its shape.
type sizeCase struct {
	name         string
	bytes        int64
	messageBytes int
	perTurn      int
}

func (c sizeCase) messages() int { return int(c.bytes / int64(c.messageBytes)) }
func (c sizeCase) turns() int    { return int(math.Ceil(float64(c.messages()) / float64(c.perTurn))) }

// parseSizes reads "1MB,10MB,100MB,1GB".
func parseSizes(list string) ([]sizeCase, error) {
	var out []sizeCase
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		unit := int64(1)
		num := name
		switch {
		case strings.HasSuffix(name, "GB"):
			unit, num = 1<<30, strings.TrimSuffix(name, "GB")
		case strings.HasSuffix(name, "MB"):
			unit, num = 1<<20, strings.TrimSuffix(name, "MB")
		case strings.HasSuffix(name, "KB"):
			unit, num = 1<<10, strings.TrimSuffix(name, "KB")
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("size %q: want e.g. 10MB or 1GB", name)
		}
		c := sizeCase{name: name, bytes: n * unit, messageBytes: 4 << 10, perTurn: 50}
		if c.bytes >= 1<<30 {
			c.messageBytes = 16 << 10 // 65,536 messages rather than 262,144
		}
		out = append(out, c)
	}
	return out, nil
}

// seedAppendBytes bounds one appendMessages request of the seed.
const seedAppendBytes = 16 << 20

// sizeResult is what one size measured.
type sizeResult struct {
	c            sizeCase
	seedTime     time.Duration
	latencies    []time.Duration
	bytesPerFork float64
	rssGrowth    []int64 // bytes, per fork
	cost         costResult
	load         string // load average before the measured forks / after the cost pass
	err          error
}

// runSizes measures every size on a fresh database of the chosen dialect.
func runSizes(ctx context.Context, o options) error {
	cases, err := parseSizes(o.sizes)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "bench-forks-sizes-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Printf("files kept in %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	bin, err := binary(ctx, o, dir)
	if err != nil {
		return err
	}
	fmt.Printf("machine: %d CPUs, load average %s; database: %s; %d forks per size after one warm-up\n",
		numCPU(), loadAverage(), o.dialect(), o.sizeForks)
	var results []sizeResult
	for _, c := range cases {
		r := measureSize(ctx, o, bin, dir, c)
		results = append(results, r)
		printSize(r)
	}
	fmt.Println()
	fmt.Println("| content | shape | seed | fork → COMMITTED p50 (p99, max) | database bytes per fork | RSS growth per fork (max) | server CPU per fork | database CPU per fork | statements per fork | load |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		fmt.Println(sizeRow(r))
	}
	return nil
}

func (o options) dialect() string {
	if o.postgres != "" {
		return "postgres"
	}
	return "sqlite"
}

// measureSize seeds one source of c's size on a fresh database (or reuses -data's) and forks it.
func measureSize(ctx context.Context, o options, bin, dir string, c sizeCase) sizeResult {
	r := sizeResult{c: c}
	db, size, cleanup, seeded, err := sizeDatabase(ctx, o, dir, c)
	if err != nil {
		r.err = err
		return r
	}
	defer cleanup()
	extra := []string{"-max-body", strconv.Itoa(seedAppendBytes + 1<<20)}
	if o.debugAddr != "" {
		extra = append(extra, "-debug-addr", o.debugAddr)
	}
	start := func(name string) (*multiinstance.Instance, error) {
		return multiinstance.Start(ctx, multiinstance.Options{Name: name, Binary: bin, DB: db, LogDir: dir, Extra: extra})
	}
	srv, err := start("seed-" + c.name)
	if err != nil {
		r.err = err
		return r
	}
	client := multiinstance.NewClient(srv.GraphQLURL())
	client.HTTP.Timeout = 10 * time.Minute
	if !seeded {
		began := time.Now()
		if err := seedSized(ctx, client, c); err != nil {
			srv.Stop()
			r.err = err
			return r
		}
		if o.postgres != "" {
			if err := vacuumAnalyze(ctx, db); err != nil {
				srv.Stop()
				r.err = fmt.Errorf("VACUUM ANALYZE after the seed: %w", err)
				return r
			}
		}
		r.seedTime = time.Since(began)
		if err := markSeeded(o, c); err != nil {
			srv.Stop()
			r.err = err
			return r
		}
	}
	// Request ids of their own per run, so a kept database's earlier forks are not replayed.
	run := "r" + strconv.FormatInt(time.Now().UnixNano(), 36)
	// One warm-up fork, so the measured ones do not pay for the first compile of their statements.
	if _, _, err := forkOnce(ctx, client, srv.Pid(), c, run+"-warmup"); err != nil {
		srv.Stop()
		r.err = fmt.Errorf("warm-up fork: %w", err)
		return r
	}
	if o.postgres == "" { // SQLite: measure the checkpointed file of a stopped server
		srv.Stop()
		if srv, err = start("measure-" + c.name); err != nil {
			r.err = err
			return r
		}
		client = multiinstance.NewClient(srv.GraphQLURL())
		client.HTTP.Timeout = 10 * time.Minute
	}
	before, err := size(false)
	if err != nil {
		srv.Stop()
		r.err = err
		return r
	}
	r.load = loadAverage()
	for i := range o.sizeForks {
		latency, rss, err := forkOnce(ctx, client, srv.Pid(), c, fmt.Sprintf("%s-measure-%d", run, i))
		if err != nil {
			r.err = err
			break
		}
		r.latencies = append(r.latencies, latency)
		r.rssGrowth = append(r.rssGrowth, rss)
	}
	if o.postgres == "" {
		srv.Stop()
	}
	after, err := size(true)
	if err != nil {
		r.err = errors.Join(r.err, err)
	} else if n := len(r.latencies); n > 0 {
		r.bytesPerFork = float64(after-before) / float64(n)
	}
	if r.err == nil && o.costForks > 0 {
		if o.postgres == "" {
			if srv, err = start("cost-" + c.name); err != nil {
				r.err = err
				return r
			}
			client = multiinstance.NewClient(srv.GraphQLURL())
			client.HTTP.Timeout = 10 * time.Minute
		}
		pgPid := 0
		if o.postgres != "" {
			pgPid = postmasterPid(ctx, db)
		}
		r.cost, r.err = costPass(ctx, client, srv, pgPid, c, o.costForks, run)
	}
	r.load += " / " + loadAverage()
	srv.Stop()
	return r
}

// sizeDatabase is -data's kept database of c (seeded says whether it holds its seed already),
// or a fresh one.
func sizeDatabase(ctx context.Context, o options, dir string, c sizeCase) (string, func(bool) (int64, error), func(), bool, error) {
	if o.data == "" {
		db, size, cleanup, err := freshDatabase(ctx, o, dir, c)
		return db, size, cleanup, false, err
	}
	db, seeded, err := keptDatabase(ctx, o, c)
	if err != nil {
		return "", nil, nil, false, err
	}
	size := func(bool) (int64, error) { return postgresBytes(ctx, db) }
	if o.postgres == "" {
		size = func(bool) (int64, error) {
			s, err := measureFile(db)
			return s.bytes(), err
		}
	}
	return db, size, func() {}, seeded, nil
}

// freshDatabase makes the database of one size case: a SQLite file, or a schema of its own on
// the PostgreSQL server. size(after) reads its bytes.
func freshDatabase(ctx context.Context, o options, dir string, c sizeCase) (string, func(after bool) (int64, error), func(), error) {
	if o.postgres == "" {
		path := filepath.Join(dir, "sizes-"+c.name+".db")
		size := func(bool) (int64, error) {
			s, err := measureFile(path)
			return s.bytes(), err
		}
		return path, size, func() {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(path + suffix)
			}
		}, nil
	}
	dsn, drop, err := multiinstance.NewSchema(ctx, o.postgres)
	if err != nil {
		return "", nil, nil, err
	}
	size := func(bool) (int64, error) { return postgresBytes(ctx, dsn) }
	return dsn, size, func() { _ = drop() }, nil
}

// postgresBytes sums pg_total_relation_size (heap, indexes, TOAST) over the tables of the
// schema dsn uses.
func postgresBytes(ctx context.Context, dsn string) (int64, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var n int64
	err = conn.QueryRow(ctx, `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::BIGINT FROM pg_class c
		JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE ns.nspname = current_schema() AND c.relkind = 'r'`).Scan(&n)
	return n, err
}

// seedSized reports the source "big" with c's turns, each settled and provider-bound, and its
// messages in appends of up to seedAppendBytes.
func seedSized(ctx context.Context, client *multiinstance.Client, c sizeCase) error {
	if err := client.ReportSource(ctx, benchWorkspace, "big", "simulated", "", c.turns()); err != nil {
		return err
	}
	content := strings.Repeat("0123456789abcdef transcript text with tool output ", c.messageBytes/48+1)[:c.messageBytes]
	perAppend := min(max(seedAppendBytes/c.messageBytes, 1), 1000, c.perTurn)
	left := c.messages()
	for t := 1; left > 0; t++ {
		turn := fmt.Sprintf("big-t%d", t)
		for inTurn := 0; inTurn < c.perTurn && left > 0; {
			n := min(perAppend, c.perTurn-inTurn, left)
			msgs := make([]map[string]any, n)
			for m := range msgs {
				// Each message differs in its first bytes, as real ones do.
				msgs[m] = map[string]any{"role": "TOOL", "content": fmt.Sprintf("%s/%d ", turn, inTurn+m) + content[20:]}
			}
			err := client.Do(ctx, `mutation($input: AppendMessagesInput!) { appendMessages(input: $input) { localId } }`,
				map[string]any{"input": map[string]any{"workspaceId": benchWorkspace, "sessionId": "big", "turnId": turn, "messages": msgs}}, nil)
			if err != nil {
				return fmt.Errorf("messages of %s: %w", turn, err)
			}
			inTurn, left = inTurn+n, left-n
		}
	}
	return nil
}

// forkOnce forks "big" through its last turn, waits for COMMITTED, acknowledges it, and returns
// fork → COMMITTED and the server's RSS growth meanwhile.
func forkOnce(ctx context.Context, client *multiinstance.Client, pid int, c sizeCase, requestID string) (time.Duration, int64, error) {
	resetPeakRSS(pid)
	base := readStatusKB(pid, "VmRSS")
	began := time.Now()
	op, err := client.Fork(ctx, benchWorkspace, "big", fmt.Sprintf("big-t%d", c.turns()), requestID)
	if err != nil {
		return 0, 0, fmt.Errorf("fork %s: %w", requestID, err)
	}
	for deadline := time.Now().Add(10 * time.Minute); !op.Terminal(); {
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("fork %s not terminal within 10 minutes: %+v", requestID, op)
		}
		time.Sleep(pollPause) // closed loop: poll the API, bounded by the deadline
		if op, _, err = client.Operation(ctx, benchWorkspace, op.ID); err != nil {
			return 0, 0, err
		}
	}
	latency := time.Since(began)
	peak := readStatusKB(pid, "VmHWM")
	if op.Status != "COMMITTED" {
		return 0, 0, fmt.Errorf("fork %s ended %s: %s", requestID, op.Status, deref(op.Error))
	}
	err = client.Do(ctx, `mutation($w: ID!, $id: ID!) { acknowledgeForkOperation(workspaceId: $w, id: $id) { id } }`,
		map[string]any{"w": benchWorkspace, "id": op.ID}, nil)
	return latency, (peak - base) << 10, err
}

// resetPeakRSS resets the process's VmHWM to its current RSS (Linux 4.0 and later; it needs the
// right to write the process's clear_refs, which the user that started it has).
func resetPeakRSS(pid int) {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// readStatusKB reads one "Name:  N kB" line of /proc/pid/status; -1 when it cannot.
func readStatusKB(pid int, name string) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return -1
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func printSize(r sizeResult) {
	fmt.Printf("%s: %d turns × %d messages of %d bytes, seeded in %s", r.c.name, r.c.turns(), r.c.perTurn,
		r.c.messageBytes, r.seedTime.Round(time.Millisecond))
	if len(r.latencies) > 0 {
		fmt.Printf("; fork → COMMITTED %s; %.0f database bytes per fork; RSS growth %s",
			durations(r.latencies), r.bytesPerFork, rssList(r.rssGrowth))
	}
	if r.cost.forks > 0 {
		fmt.Printf("; cost pass of %d forks: server CPU %s, database CPU %s, statements %v", r.cost.forks,
			ms(meanDuration(r.cost.serverCPU)), ms(meanDuration(r.cost.databaseCPU)), r.cost.statements)
	}
	if r.err != nil {
		fmt.Printf("; error: %v", r.err)
	}
	fmt.Printf("; load %s\n", r.load)
}

func sizeRow(r sizeResult) string {
	shape := fmt.Sprintf("%d turns × %d × %d KB", r.c.turns(), r.c.perTurn, r.c.messageBytes>>10)
	if len(r.latencies) == 0 {
		return fmt.Sprintf("| %s | %s | %s | failed: %v | – | – | – | – | – | %s |", r.c.name, shape, r.seedTime.Round(time.Second), r.err, r.load)
	}
	s := append([]time.Duration(nil), r.latencies...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	g := append([]int64(nil), r.rssGrowth...)
	sort.Slice(g, func(i, j int) bool { return g[i] < g[j] })
	dbCPU := "in the server"
	if len(r.cost.databaseCPU) > 0 {
		dbCPU = ms(meanDuration(r.cost.databaseCPU))
	}
	serverCPU, stmts := "–", "–"
	if r.cost.forks > 0 {
		serverCPU, stmts = ms(meanDuration(r.cost.serverCPU)), fmt.Sprintf("%.1f", meanInt(r.cost.statements))
	}
	return fmt.Sprintf("| %s | %s | %s | %s (%s, %s) | %.0f | %s (%s) | %s | %s | %s | %s |", r.c.name, shape, r.seedTime.Round(time.Second),
		ms(s[len(s)/2]), ms(s[int(0.99*float64(len(s)-1))]), ms(s[len(s)-1]), r.bytesPerFork,
		mib(g[len(g)/2]), mib(g[len(g)-1]), serverCPU, dbCPU, stmts, r.load)
}

// ms is d in milliseconds, one decimal.
func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func durations(ds []time.Duration) string {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return fmt.Sprintf("p50 %s, max %s", s[len(s)/2].Round(100*time.Microsecond), s[len(s)-1].Round(100*time.Microsecond))
}

func rssList(bs []int64) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = mib(b)
	}
	return strings.Join(parts, " ")
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
