package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/internal/testbin"
	"github.com/forkgraph/forkgraph/store"
)

// readyDeadline bounds how long park may take to seed and park; generous, since the build and
// the first SQLite migrations share two cores with everything else.
const readyDeadline = 2 * time.Minute

// TestCrashRecovery kills a process with SIGKILL while one operation sits in each in-flight phase,
// recovers on the same file in a new process, and checks that nothing was lost, every operation
// ended where SPEC §2.7 says, and the provider was called at most once per operation.
func TestCrashRecovery(t *testing.T) {
	t.Parallel() // its own file and processes
	dir := t.TempDir()
	bin := buildHarness(t, dir)
	dbPath, callsPath := filepath.Join(dir, "crash.db"), filepath.Join(dir, "calls.log")

	m := parkAndKill(t, bin, dbPath, callsPath)
	assertParkedAfterKill(t, dbPath, m)
	assertChildIDs(t, dbPath, m)
	before := readSource(t, dbPath)

	report := runRecover(t, bin, dbPath, callsPath)
	if len(report.Errors) != 0 || report.Scanned != 3 || report.Unknown != 1 || report.Committed != 2 {
		t.Fatalf("recovery report %+v, want 3 scanned, 1 unknown, 2 committed, no errors", report)
	}
	assertRecovered(t, dbPath, m, before)
	assertChildIDs(t, dbPath, m)
	assertCalls(t, callsPath, map[string]string{
		m.Child: "park", m.Prepared: "recover", m.Dispatching: "park", m.ProviderAccepted: "park",
	})

	// A second recovery finds nothing to do and calls no provider.
	if again := runRecover(t, bin, dbPath, callsPath); again.Scanned != 0 {
		t.Fatalf("second recovery scanned %d operations, want 0", again.Scanned)
	}
	assertCalls(t, callsPath, map[string]string{
		m.Child: "park", m.Prepared: "recover", m.Dispatching: "park", m.ProviderAccepted: "park",
	})

	// Once its first reconcile attempt is due, the delivery the kill left unknown is reconciled:
	// the simulated provider finds the child the held Fork made, and it commits. Fork is not
	// called again.
	reconciled := runRecover(t, bin, dbPath, callsPath, "-clock-offset", "1m")
	if reconciled.Reconciled != 1 || reconciled.Committed != 1 || len(reconciled.Errors) != 0 ||
		reconciled.Statuses[m.Dispatching] != string(forkengine.StatusCommitted) {
		t.Fatalf("reconcile pass %+v, want the unknown delivery reconciled to committed", reconciled)
	}
	assertCalls(t, callsPath, map[string]string{
		m.Child: "park", m.Prepared: "recover", m.Dispatching: "park", m.ProviderAccepted: "park",
	})
}

func buildHarness(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "crashharness")
	ctx, cancel := context.WithTimeout(context.Background(), readyDeadline)
	defer cancel()
	if err := testbin.Build(ctx, filepath.Join("..", ".."), "./internal/crashharness", bin); err != nil {
		t.Fatalf("build harness: %v", err)
	}
	return bin
}

// parkAndKill runs park until it prints READY, then kills it with SIGKILL.
func parkAndKill(t *testing.T, bin, dbPath, callsPath string, extra ...string) Manifest {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-mode=park", "-db", dbPath, "-calls", callsPath}, extra...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start park: %v", err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		for sc := bufio.NewScanner(stdout); sc.Scan(); {
			lines <- sc.Text()
		}
	}()
	var m Manifest
	deadline := time.After(readyDeadline)
	for ready := false; !ready; {
		select {
		case line, ok := <-lines:
			if !ok {
				_ = cmd.Wait()
				t.Fatalf("park exited before READY: %s", stderr.String())
			}
			if line == "READY" {
				ready = true
			} else if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("park printed %q: %v", line, err)
			}
		case <-deadline:
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("park not READY within %s: %s", readyDeadline, stderr.String())
		}
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no deferred code, no clean close
		t.Fatalf("kill park: %v", err)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("park ended with %v, want killed", err)
	}
	if m.Prepared == "" || m.Dispatching == "" || m.ProviderAccepted == "" || m.Child == "" ||
		len(m.ChildTurnIDs) != sourceTurns+1 || len(m.ChildMessageIDs) != (sourceTurns+1)*messagesPerTurn {
		t.Fatalf("park manifest incomplete: %+v", m)
	}
	return m
}

func runRecover(t *testing.T, bin, dbPath, callsPath string, extra ...string) Report {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-mode=recover", "-db", dbPath, "-calls", callsPath}, extra...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("recover: %v\n%s", err, stderr.String())
	}
	var r Report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("recover printed %q: %v", out, err)
	}
	return r
}

func openStore(t *testing.T, dbPath string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), store.Config{DSN: dbPath, ReadOnly: true})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// assertParkedAfterKill checks the file the killed process left: every phase survived, and the
// commit that was in flight left nothing behind.
func assertParkedAfterKill(t *testing.T, dbPath string, m Manifest) {
	t.Helper()
	db := openStore(t, dbPath)
	ctx := context.Background()
	want := map[string]forkengine.OperationStatus{
		m.Prepared: forkengine.StatusPrepared, m.Dispatching: forkengine.StatusDispatching,
		m.ProviderAccepted: forkengine.StatusProviderAccepted,
	}
	for id, status := range want {
		op, err := db.GetOperation(ctx, workspaceID, id)
		if err != nil || op.Status != status {
			t.Fatalf("after the kill operation %s is %q (%v), want %s", id, op.Status, err, status)
		}
		if _, err := db.GetSession(ctx, workspaceID, op.TargetSessionID); err == nil {
			t.Fatalf("after the kill target %s of %s exists: an uncommitted write survived", op.TargetSessionID, status)
		}
	}
}

// sourceState is what the source session holds.
type sourceState struct {
	turns    []forkengine.Turn
	messages int
}

func readSource(t *testing.T, dbPath string) sourceState {
	t.Helper()
	db := openStore(t, dbPath)
	ctx := context.Background()
	turns, err := db.TurnsThrough(ctx, workspaceID, sourceID, 1<<62)
	if err != nil {
		t.Fatalf("read source turns: %v", err)
	}
	return sourceState{turns: turns, messages: countMessages(t, db, turns)}
}

func countMessages(t *testing.T, r forkengine.Reader, turns []forkengine.Turn) int {
	t.Helper()
	ids := make([]string, len(turns))
	for i, turn := range turns {
		ids[i] = turn.ID
	}
	msgs, err := r.MessagesByTurnIDs(context.Background(), workspaceID, ids)
	if err != nil {
		t.Fatalf("read messages: %v", err)
	}
	n := 0
	for _, ms := range msgs {
		n += len(ms)
	}
	return n
}

// assertRecovered checks final statuses, the committed targets, and that the source is intact.
func assertRecovered(t *testing.T, dbPath string, m Manifest, before sourceState) {
	t.Helper()
	db := openStore(t, dbPath)
	ctx := context.Background()
	if len(before.turns) != sourceTurns || before.messages != sourceTurns*messagesPerTurn {
		t.Fatalf("source had %d turns and %d messages, want %d and %d", len(before.turns), before.messages,
			sourceTurns, sourceTurns*messagesPerTurn)
	}
	if after := readSource(t, dbPath); len(after.turns) != len(before.turns) || after.messages != before.messages {
		t.Fatalf("source changed by recovery: %d turns/%d messages, was %d/%d",
			len(after.turns), after.messages, len(before.turns), before.messages)
	}
	unknown, err := db.GetOperation(ctx, workspaceID, m.Dispatching)
	if err != nil || unknown.Status != forkengine.StatusUnknown || unknown.Error == "" {
		t.Fatalf("dispatching operation became %q with error %q (%v), want unknown with a reason", unknown.Status, unknown.Error, err)
	}
	// The provider_accepted operation forked the child through its own turn: the source's four
	// turns read through the child's History, then the child's turn.
	for id, through := range map[string]int{m.Prepared: 2, m.ProviderAccepted: sourceTurns + 1} {
		assertCommittedTarget(t, db, id, through)
	}
}

// assertCommittedTarget checks an operation committed with a target holding exactly the frozen
// prefix: through turns and their messages, and a lineage.
func assertCommittedTarget(t *testing.T, db *store.DB, id string, through int) {
	t.Helper()
	ctx := context.Background()
	op, err := db.GetOperation(ctx, workspaceID, id)
	if err != nil || op.Status != forkengine.StatusCommitted || op.TargetTurnID == "" {
		t.Fatalf("operation %s is %q, target turn %q (%v), want committed", id, op.Status, op.TargetTurnID, err)
	}
	turns, err := db.TurnsThrough(ctx, workspaceID, op.TargetSessionID, 1<<62)
	if err != nil || len(turns) != through {
		t.Fatalf("target of %s has %d turns (%v), want %d", id, len(turns), err, through)
	}
	if n := countMessages(t, db, turns); n != through*messagesPerTurn {
		t.Fatalf("target of %s has %d messages, want %d", id, n, through*messagesPerTurn)
	}
	ids := make([]string, len(turns))
	for i, turn := range turns {
		ids[i] = turn.ID
	}
	msgs, err := db.MessagesByTurnIDs(ctx, workspaceID, ids)
	if err != nil {
		t.Fatalf("read messages of the target of %s: %v", id, err)
	}
	for _, turn := range turns {
		for _, msg := range msgs[turn.ID] {
			if len(msg.Content) != messageBytes || msg.SessionID != op.TargetSessionID {
				t.Fatalf("target of %s: message %s of %d bytes in session %s, want %d bytes in %s",
					id, msg.ID, len(msg.Content), msg.SessionID, messageBytes, op.TargetSessionID)
			}
		}
	}
	lineages, err := db.LineagesByTargetIDs(ctx, workspaceID, []string{op.TargetSessionID})
	if err != nil || lineages[op.TargetSessionID].OperationID != id {
		t.Fatalf("target of %s has lineage %+v (%v)", id, lineages[op.TargetSessionID], err)
	}
}

// assertChildIDs checks that the committed child presents its transcript under the ids the
// killed park process read it under: an inherited turn's or message's id is the same in every
// process, before and after the crash and the recovery.
func assertChildIDs(t *testing.T, dbPath string, m Manifest) {
	t.Helper()
	turns, messages, err := transcriptIDs(context.Background(), openStore(t, dbPath), childID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(turns, m.ChildTurnIDs) || !slices.Equal(messages, m.ChildMessageIDs) {
		t.Fatalf("the child presents turns %v and messages %v, park read %v and %v", turns, messages, m.ChildTurnIDs, m.ChildMessageIDs)
	}
	for _, id := range turns[:sourceTurns] {
		if _, _, ok := forkengine.ParsePresentedTurnID(id); !ok {
			t.Fatalf("the child's inherited turn %s is not a presented id: the fork copied its prefix", id)
		}
	}
}

// assertCalls checks the calls file: each operation called the driver exactly once, from the
// process named, and nothing else called it.
func assertCalls(t *testing.T, callsPath string, want map[string]string) {
	t.Helper()
	data, err := os.ReadFile(callsPath)
	if err != nil {
		t.Fatalf("read calls file: %v", err)
	}
	got := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		process, op, _ := strings.Cut(line, " ")
		got[op] = append(got[op], process)
	}
	if len(got) != len(want) {
		t.Fatalf("driver calls %v, want one for each of %v", got, want)
	}
	for op, process := range want {
		if calls := got[op]; len(calls) != 1 || calls[0] != process {
			t.Errorf("operation %s: driver calls from %v, want exactly one from %s", op, calls, process)
		}
	}
}
