package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/forkgraph/forkgraph/forkengine"
)

// recordingDriver appends "<process> <operation id>" to the calls file, fsynced, before it
// forwards a Fork call. An operation listed in hold is recorded and then never answered, which
// parks it in dispatching.
type recordingDriver struct {
	forkengine.Driver
	process string

	mu    sync.Mutex
	calls *os.File
	hold  map[string]chan struct{} // closed once the held call is on disk
}

func newRecordingDriver(inner forkengine.Driver, process, path string) (*recordingDriver, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open calls file: %w", err)
	}
	return &recordingDriver{Driver: inner, process: process, calls: f, hold: map[string]chan struct{}{}}, nil
}

// holdFork makes the next Fork of operationID block forever once recorded; the returned channel
// closes when that call has been recorded.
func (d *recordingDriver) holdFork(operationID string) <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	ch := make(chan struct{})
	d.hold[operationID] = ch
	return ch
}

// Fork records the call durably, then forwards it (or holds it). If the call cannot be recorded,
// it is not forwarded: the provider is never called without a trace on disk.
func (d *recordingDriver) Fork(ctx context.Context, req forkengine.ForkRequest) (forkengine.ForkResult, error) {
	if err := d.record(req.OperationID); err != nil {
		return forkengine.ForkResult{Disposition: forkengine.DispositionNotStarted, Error: err.Error()}, nil
	}
	d.mu.Lock()
	held, ok := d.hold[req.OperationID]
	d.mu.Unlock()
	if ok {
		close(held)
		select {} // the provider never answers; the process is killed while it waits
	}
	return d.Driver.Fork(ctx, req)
}

func (d *recordingDriver) record(operationID string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, err := fmt.Fprintf(d.calls, "%s %s\n", d.process, operationID); err != nil {
		return fmt.Errorf("record fork call: %w", err)
	}
	if err := d.calls.Sync(); err != nil {
		return fmt.Errorf("sync calls file: %w", err)
	}
	return nil
}

// Reconcile forwards to the wrapped driver. It is not recorded as a Fork call: reconciliation
// only asks what became of a fork, and the calls file must show that it never forks again.
func (d *recordingDriver) Reconcile(ctx context.Context, req forkengine.ReconcileRequest) (forkengine.ReconcileResult, error) {
	if r, ok := d.Driver.(forkengine.Reconciler); ok {
		return r.Reconcile(ctx, req)
	}
	return forkengine.ReconcileResult{Answer: forkengine.ReconcileUnknown}, nil
}

// blockingStore wraps a Store so that the transaction committing one chosen operation stops
// forever at its last write, the lineage: the status change, target session, turns and messages
// are written but never committed, which parks the operation in provider_accepted with a
// half-done commit.
//
// The engine first tries to record the provider's acceptance and the commit in one transaction
// (the row moves from dispatching straight to committed). That attempt is refused rather than
// blocked (it would park the operation in dispatching), so the engine falls back to recording the
// acceptance alone and then blocks in the commit that follows.
type blockingStore struct {
	forkengine.Store
	operationID string
	blocked     chan struct{} // closed when the commit transaction has stopped
	once        sync.Once
}

func (s *blockingStore) Update(ctx context.Context, fn func(tx forkengine.Tx) error) error {
	return s.Store.Update(ctx, func(tx forkengine.Tx) error {
		return fn(&blockingTx{Tx: tx, store: s})
	})
}

type blockingTx struct {
	forkengine.Tx
	store      *blockingStore
	committing bool // this transaction commits the chosen operation from provider_accepted
}

// errCombinedCommit refuses the commit that shares a transaction with the acceptance.
var errCombinedCommit = errors.New("crashharness: commit beside the acceptance refused")

func (tx *blockingTx) UpdateOperation(ctx context.Context, op forkengine.ForkOperation, expect forkengine.OperationStatus) (bool, error) {
	if op.ID == tx.store.operationID && op.Status == forkengine.StatusCommitted {
		if expect != forkengine.StatusProviderAccepted {
			return false, errCombinedCommit
		}
		tx.committing = true
	}
	return tx.Tx.UpdateOperation(ctx, op, expect)
}

func (tx *blockingTx) InsertLineage(ctx context.Context, l forkengine.Lineage) error {
	if tx.committing && l.OperationID == tx.store.operationID {
		tx.store.once.Do(func() { close(tx.store.blocked) })
		select {} // holds the write transaction open until the process is killed
	}
	return tx.Tx.InsertLineage(ctx, l)
}
