package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/simulated"
	"github.com/forkgraph/forkgraph/store"
)

// Source shape: turns × messages per turn of messageBytes each (3 MB of transcript with the
// child's turn). Each parked operation forks through a different turn, since one boundary holds
// at most one active operation.
const (
	sourceTurns     = 4
	messagesPerTurn = 3
	messageBytes    = 200 << 10
)

// The committed fork of the source through its last turn, and its turn of its own: the parked
// provider_accepted operation forks it through that turn, a fork of a fork whose History reads
// both the source's rows and the child's.
const (
	childID      = "child"
	childThrough = "turn-4"
	childTurn    = "child-turn-5"
)

// Boundary turns of the parked operations (the last one the child's).
const (
	preparedThrough         = "turn-2"
	dispatchingThrough      = "turn-3"
	providerAcceptedThrough = childTurn
)

// park seeds the source, parks one operation per in-flight phase, verifies the phases from the
// database through a separate handle, prints the manifest and READY, and waits to be killed.
func park(ctx context.Context, o options, out io.Writer) error {
	dbPath, callsPath, lifetime := o.db, o.calls, o.lifetime
	db, err := store.Open(ctx, store.Config{DSN: dbPath})
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	// The checking handle is opened before anything is parked: once the commit transaction is
	// stuck it holds the write lock, and opening a store may need it.
	check, err := store.Open(ctx, store.Config{DSN: dbPath, ReadOnly: true})
	if err != nil {
		return fmt.Errorf("open checking store: %w", err)
	}
	driver, err := newRecordingDriver(simulated.New(simulated.Options{}), "park", callsPath)
	if err != nil {
		return err
	}
	blocking := &blockingStore{Store: db, blocked: make(chan struct{})}
	engine, err := forkengine.New(forkengine.Config{
		Store: blocking, Drivers: map[string]forkengine.Driver{"simulated": driver},
		NoBackground: true, DispatchTimeout: time.Hour, InstanceID: o.instance, LeaseDuration: o.lease,
	})
	if err != nil {
		return fmt.Errorf("build engine: %w", err)
	}
	if err := seedSource(ctx, engine); err != nil {
		return err
	}
	child, turns, messages, err := seedChild(ctx, engine, check)
	if err != nil {
		return err
	}
	m, err := parkOperations(ctx, engine, driver, blocking)
	if err != nil {
		return err
	}
	m.Child, m.ChildTurnIDs, m.ChildMessageIDs = child, turns, messages
	if err := verifyParked(ctx, check, m); err != nil {
		return err
	}
	line, _ := json.Marshal(m) // a struct of strings always marshals
	if _, err := fmt.Fprintf(out, "%s\nREADY\n", line); err != nil {
		return fmt.Errorf("announce readiness: %w", err)
	}
	return waitToBeKilled(lifetime)
}

// parkOperations starts three forks (all prepared, since the engine runs nothing in the
// background), then drives two of them until they stop: one inside the driver call, one inside
// its commit transaction.
func parkOperations(ctx context.Context, e *forkengine.Engine, d *recordingDriver, s *blockingStore) (Manifest, error) {
	var m Manifest
	for _, f := range []struct {
		id      *string
		through string
		source  string
	}{{&m.Prepared, preparedThrough, sourceID}, {&m.Dispatching, dispatchingThrough, sourceID},
		{&m.ProviderAccepted, providerAcceptedThrough, childID}} {
		op, err := e.StartFork(ctx, forkengine.ForkInput{WorkspaceID: workspaceID, SourceSessionID: f.source,
			ThroughTurnID: f.through, RequestID: "request-" + f.through})
		if err != nil {
			return m, fmt.Errorf("start fork through %s: %w", f.through, err)
		}
		*f.id = op.ID
	}
	dispatched := d.holdFork(m.Dispatching)
	go processForever(ctx, e, m.Dispatching)
	<-dispatched
	s.operationID = m.ProviderAccepted // set before the goroutine starts; read only by it
	go processForever(ctx, e, m.ProviderAccepted)
	<-s.blocked
	return m, nil
}

// processForever drives an operation that is expected never to finish; if it does, the park is
// broken and the process says so.
func processForever(ctx context.Context, e *forkengine.Engine, id string) {
	op, err := e.ProcessOperation(ctx, workspaceID, id)
	fmt.Fprintf(os.Stderr, "crashharness: operation %s was expected to stay parked but returned %s (%v)\n", id, op.Status, err)
	os.Exit(2)
}

// verifyParked reads every parked operation through a separate connection pool, so READY means
// the phases are committed in the file, not just believed by this process.
func verifyParked(ctx context.Context, r forkengine.Reader, m Manifest) error {
	want := map[string]forkengine.OperationStatus{
		m.Prepared: forkengine.StatusPrepared, m.Dispatching: forkengine.StatusDispatching,
		m.ProviderAccepted: forkengine.StatusProviderAccepted,
	}
	for id, status := range want {
		op, err := r.GetOperation(ctx, workspaceID, id)
		if err != nil {
			return fmt.Errorf("verify parked operation %s: %w", id, err)
		}
		if op.Status != status {
			return fmt.Errorf("operation %s is %s in the database, want %s", id, op.Status, status)
		}
	}
	return nil
}

func waitToBeKilled(lifetime time.Duration) error {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case sig := <-stop:
		return fmt.Errorf("parked harness stopped by %s instead of SIGKILL", sig)
	case <-time.After(lifetime):
		return fmt.Errorf("parked harness was not killed within %s", lifetime)
	}
}
