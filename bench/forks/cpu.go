package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/forkgraph/forkgraph/internal/multiinstance"
)

// The cost pass of the size axis: after the latency pass, -cost-forks more forks, each waited for
// by polling the operation every costPoll (so the polls' own statements are few), with the
// server's CPU time (/proc/<pid>/stat), the database's (PostgreSQL: every backend of the cluster,
// the children of its postmaster; SQLite runs in the server, so its CPU is in the server's) and
// the server's statement counter (/metrics) read before forkSession and after the
// acknowledgement. A cycle's figures are the whole of it: forkSession, the background dispatch
// and commit, the polls and acknowledgeForkOperation. CPU times and statements move little with
// the load of a shared machine, unlike the latencies.

// costPoll is the cost pass's wait between two reads of the operation.
const costPoll = 100 * time.Millisecond

// clockTick is the unit of /proc/<pid>/stat's utime and stime: USER_HZ, 100 on every Linux.
const clockTick = 10 * time.Millisecond

// procCPU is the user and system time pid has used, or -1 when it cannot be read.
func procCPU(pid int) time.Duration {
	f, err := procStat(pid)
	if err != nil || len(f) < 13 {
		return -1
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(u+s) * clockTick
}

// procStat is /proc/<pid>/stat's fields after the command (field 3, the state, first).
func procStat(pid int) ([]string, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')') // the command may hold spaces and parentheses
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command", pid)
	}
	return strings.Fields(s[i+1:]), nil
}

// childrenCPU sums the CPU time of every process whose parent is ppid: a PostgreSQL cluster's
// backends and background workers are its postmaster's children. A backend that exits between
// two readings takes its time with it; the server's pool keeps its connections open.
func childrenCPU(ppid int) time.Duration {
	if ppid <= 0 {
		return -1
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return -1
	}
	var total time.Duration
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, err := procStat(pid)
		if err != nil || len(f) < 2 || f[1] != strconv.Itoa(ppid) {
			continue
		}
		if c := procCPU(pid); c > 0 {
			total += c
		}
	}
	return total
}

// postmasterPid finds the postmaster of the PostgreSQL server at dsn: the parent of the backend
// that answers. 0 when the server is not on this machine (or not readable).
func postmasterPid(ctx context.Context, dsn string) int {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0
	}
	defer conn.Close(ctx)
	var backend int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return 0
	}
	f, err := procStat(backend)
	if err != nil || len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// vacuumAnalyze runs VACUUM ANALYZE over the schema dsn uses, as an operator would after a bulk
// load: without it the planner plans the first forks after the seed on the statistics of empty
// tables, and autovacuum's visit lands in the middle of the measured forks.
func vacuumAnalyze(ctx context.Context, dsn string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "VACUUM ANALYZE")
	return err
}

// costResult is what the cost pass measured, per fork cycle.
type costResult struct {
	forks                  int
	serverCPU, databaseCPU []time.Duration // databaseCPU empty on SQLite
	statements             []int64
}

// costPass runs n fork cycles of "big" and reads their costs. pgPid is the postmaster (0: none).
func costPass(ctx context.Context, client *multiinstance.Client, srv *multiinstance.Instance, pgPid int, c sizeCase, n int, run string) (costResult, error) {
	var res costResult
	for i := range n {
		s0, err := scrapeStatements(ctx, srv.URL())
		if err != nil {
			return res, err
		}
		cpu0, db0 := procCPU(srv.Pid()), childrenCPU(pgPid)
		if err := costCycle(ctx, client, c, fmt.Sprintf("%s-cost-%d", run, i)); err != nil {
			return res, err
		}
		cpu1, db1 := procCPU(srv.Pid()), childrenCPU(pgPid)
		s1, err := scrapeStatements(ctx, srv.URL())
		if err != nil {
			return res, err
		}
		res.forks++
		res.statements = append(res.statements, s1-s0)
		res.serverCPU = append(res.serverCPU, cpu1-cpu0)
		if pgPid > 0 {
			res.databaseCPU = append(res.databaseCPU, db1-db0)
		}
	}
	return res, nil
}

// costCycle forks, polls every costPoll until the fork is terminal, and acknowledges it.
func costCycle(ctx context.Context, client *multiinstance.Client, c sizeCase, requestID string) error {
	op, err := client.Fork(ctx, benchWorkspace, "big", fmt.Sprintf("big-t%d", c.turns()), requestID)
	if err != nil {
		return fmt.Errorf("fork %s: %w", requestID, err)
	}
	for deadline := time.Now().Add(10 * time.Minute); !op.Terminal(); {
		if time.Now().After(deadline) {
			return fmt.Errorf("fork %s not terminal within 10 minutes: %+v", requestID, op)
		}
		time.Sleep(costPoll)
		if op, _, err = client.Operation(ctx, benchWorkspace, op.ID); err != nil {
			return err
		}
	}
	if op.Status != "COMMITTED" {
		return fmt.Errorf("fork %s ended %s: %s", requestID, op.Status, deref(op.Error))
	}
	return client.Do(ctx, `mutation($w: ID!, $id: ID!) { acknowledgeForkOperation(workspaceId: $w, id: $id) { id } }`,
		map[string]any{"w": benchWorkspace, "id": op.ID}, nil)
}

// meanDuration is the mean of ds; meanInt of ns.
func meanDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return t / time.Duration(len(ds))
}

func meanInt(ns []int64) float64 {
	if len(ns) == 0 {
		return 0
	}
	var t int64
	for _, n := range ns {
		t += n
	}
	return float64(t) / float64(len(ns))
}

// keptDatabase is -data's database of one size case: a SQLite file in dir, or a schema of its own
// on the PostgreSQL server, kept between runs so a 1 GB seed is paid once. seeded says whether
// an earlier run finished seeding it (a marker file written after the seed); one that did not is
// emptied first.
func keptDatabase(ctx context.Context, o options, c sizeCase) (db string, seeded bool, err error) {
	if err := os.MkdirAll(o.data, 0o755); err != nil {
		return "", false, err
	}
	marker := filepath.Join(o.data, o.dialect()+"-"+c.name+".seeded")
	_, statErr := os.Stat(marker)
	seeded = statErr == nil
	if o.postgres == "" {
		path := filepath.Join(o.data, "sizes-"+c.name+".db")
		if !seeded {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(path + suffix)
			}
		}
		return path, seeded, nil
	}
	schema := "forks_sizes_" + strings.ToLower(c.name)
	conn, err := pgx.Connect(ctx, o.postgres)
	if err != nil {
		return "", false, err
	}
	defer conn.Close(ctx)
	if !seeded {
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			return "", false, err
		}
		if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
			return "", false, err
		}
	}
	dsn, err := withSearchPath(o.postgres, schema)
	return dsn, seeded, err
}

// markSeeded records that c's kept database holds its seed.
func markSeeded(o options, c sizeCase) error {
	if o.data == "" {
		return nil
	}
	return os.WriteFile(filepath.Join(o.data, o.dialect()+"-"+c.name+".seeded"), []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644)
}

// withSearchPath is base with its connections' search_path set to schema.
func withSearchPath(base, schema string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("parse %s: %w", base, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}
