package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestReconcileFindsTheForkedChild(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	_, forked := ta.fork(t, forkOf("r1"))
	status, got := ta.reconcile(t, forkOf("r1"))
	if status != http.StatusOK || got.Answer != answerFound || got.ProviderSessionID != forked.ProviderSessionID ||
		got.StateBindingMode != hostCopy {
		t.Fatalf("reconcile = %d %+v, want found %s", status, got, forked.ProviderSessionID)
	}
	st := ta.onDisk(t)
	if rec, _ := st.request("ws", "r1"); rec.Reconciles != 1 || rec.ForkDeliveries != 1 || childrenOf(st, "r1") != 1 {
		t.Fatalf("reconcile changed more than its count: %+v, %d children", rec, childrenOf(st, "r1"))
	}
}

// TestReconcileAbsentIsForever: absent about an unseen request id writes a tombstone first, so a
// /fork for it arriving later is refused and absent stays true, across a restart too.
func TestReconcileAbsentIsForever(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	status, got := ta.reconcile(t, forkOf("late"))
	if status != http.StatusOK || got.Answer != answerAbsent || got.ProviderSessionID != "" {
		t.Fatalf("reconcile of an unseen request = %d %+v, want absent", status, got)
	}
	if rec, ok := ta.onDisk(t).request("ws", "late"); !ok || rec.Outcome != outcomeAbsent {
		t.Fatalf("no durable tombstone after absent: %+v", rec)
	}
	restarted := newTestAdapter(t, ta.path, 0)
	if status, late := restarted.fork(t, forkOf("late")); status != http.StatusConflict || late.Disposition != dispositionRejected {
		t.Fatalf("late fork after absent = %d %+v, want 409 rejected", status, late)
	}
	if _, again := restarted.reconcile(t, forkOf("late")); again.Answer != answerAbsent {
		t.Fatalf("second reconcile = %+v, want absent", again)
	}
	if n := len(restarted.onDisk(t).Sessions); n != 0 {
		t.Fatalf("state has %d sessions after a refused fork, want 0", n)
	}
}

// TestReconcileOfAnotherOperationIsAbsent: the request id is taken by another operation, so this
// operation has no child and a /fork of it would be refused.
func TestReconcileOfAnotherOperationIsAbsent(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	ta.fork(t, forkOf("r1"))
	other := forkOf("r1")
	other.OperationID = "op-other"
	if _, got := ta.reconcile(t, other); got.Answer != answerAbsent || got.ProviderSessionID != "" {
		t.Fatalf("reconcile of another operation = %+v, want absent", got)
	}
	if _, got := ta.reconcile(t, forkOf("r1")); got.Answer != answerFound {
		t.Fatalf("reconcile of the forking operation = %+v, want found", got)
	}
}

// TestForkRecordsTheChildBeforeAnswering: while /fork waits (-fork-delay) the child is already on
// disk, so an adapter killed then still knows it; the caller that gave up gets no answer.
func TestForkRecordsTheChildBeforeAnswering(t *testing.T) {
	ta := newTestAdapter(t, "", time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		var out forkResponse
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ta.url+"/fork", jsonBody(t, forkOf("r1")))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			t.Errorf("fork answered %d %+v during its delay", resp.StatusCode, out)
		}
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for childrenOf(ta.onDisk(t), "r1") != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the child was not on disk while /fork waited")
		}
		time.Sleep(10 * time.Millisecond) // polling the file; the fork itself waits an hour
	}
	if err := <-done; err == nil {
		t.Fatal("the fork answered during its delay")
	}
	restarted := newTestAdapter(t, ta.path, 0)
	if _, got := restarted.reconcile(t, forkOf("r1")); got.Answer != answerFound {
		t.Fatalf("reconcile after the caller gave up = %+v, want found", got)
	}
}

// TestUnwritableStateIsNeverAbsent: if the tombstone or the child cannot be written, the answer is
// unknown (a 503), never absent or accepted, and nothing is remembered that is not on disk.
func TestUnwritableStateIsNeverAbsent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ta := newTestAdapter(t, filepath.Join(dir, "state.json"), 0)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if status, got := ta.reconcile(t, forkOf("r1")); status != http.StatusServiceUnavailable || got.Answer != "unknown" {
		t.Fatalf("reconcile with an unwritable state = %d %+v, want 503 unknown", status, got)
	}
	if status, got := ta.fork(t, forkOf("r1")); status != http.StatusServiceUnavailable || got.Disposition != "unknown" {
		t.Fatalf("fork with an unwritable state = %d %+v, want 503 unknown", status, got)
	}
	ta.state.read(func(s *state) {
		if len(s.Sessions) != 0 || len(s.Requests) != 0 {
			t.Fatalf("in-memory state changed without being written: %+v", s)
		}
	})
}
