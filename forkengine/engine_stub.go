package forkengine

// This file declares the Engine's public API with placeholder bodies so the API layer can compile
// against it while the engine is built. The engine work replaces it file by file and deletes it.

import (
	"context"
	"errors"
)

var errNotImplemented = errors.New("not implemented yet")

// Engine runs the fork lifecycle over a Store and provider Drivers.
type Engine struct {
	cfg Config
}

// New builds an engine. It does not start recovery; call Recover once at start-up.
func New(cfg Config) (*Engine, error) { return &Engine{cfg: cfg}, nil }

// Reader returns the store's read side, for loaders.
func (e *Engine) Reader() Reader { return e.cfg.Store }

// ReportSession upserts a session. Errors: BAD_USER_INPUT, CONFLICT (id reserved by a fork).
func (e *Engine) ReportSession(ctx context.Context, in SessionReport) (Session, error) {
	return Session{}, errNotImplemented
}

// ReportTurn upserts a turn. Errors: BAD_USER_INPUT (reason turn_phase_backwards, ...), NOT_FOUND.
func (e *Engine) ReportTurn(ctx context.Context, in TurnReport) (Turn, error) {
	return Turn{}, errNotImplemented
}

// AppendMessages appends messages to a turn. Errors: BAD_USER_INPUT, NOT_FOUND.
func (e *Engine) AppendMessages(ctx context.Context, in MessageAppend) ([]Message, error) {
	return nil, errNotImplemented
}

// DeleteSession soft-deletes (or purges) a session. Errors: NOT_FOUND, FORK_IN_PROGRESS, FORK_CONFLICT.
func (e *Engine) DeleteSession(ctx context.Context, workspaceID, id string, purge bool) error {
	return errNotImplemented
}

// StartFork validates, freezes and prepares a fork and returns at once. Errors: BAD_USER_INPUT,
// NOT_FOUND, FORK_CONFLICT (+reason), FORK_IN_PROGRESS, FORK_UNSUPPORTED.
func (e *Engine) StartFork(ctx context.Context, in ForkInput) (ForkOperation, error) {
	return ForkOperation{}, errNotImplemented
}

// Operation reads an operation; a provider_accepted one is finished first. Never acknowledges.
// Errors: NOT_FOUND.
func (e *Engine) Operation(ctx context.Context, workspaceID, id string) (ForkOperation, error) {
	return ForkOperation{}, errNotImplemented
}

// Acknowledge marks a committed operation as observed. Errors: NOT_FOUND, ACKNOWLEDGE_CONFLICT.
func (e *Engine) Acknowledge(ctx context.Context, workspaceID, id string) (ForkOperation, error) {
	return ForkOperation{}, errNotImplemented
}

// CommittedResult builds the immutable committed projection (target session and lineage) from the
// operation and its frozen snapshot. Errors: FORK_CONFLICT (reason inconsistent_lineage).
func (e *Engine) CommittedResult(ctx context.Context, op ForkOperation) (Session, Lineage, error) {
	return Session{}, Lineage{}, errNotImplemented
}

// TurnForkability answers providerForkBindingAvailable for each query in order, with one driver
// ProbeTurns call per provider and identical turns probed once. Never errors: fail closed.
func (e *Engine) TurnForkability(ctx context.Context, qs []ForkabilityQuery) []bool {
	return make([]bool, len(qs))
}

// Capabilities resolves lifecycle capabilities for each session in order. Fail closed.
func (e *Engine) Capabilities(ctx context.Context, sessions []Session) []LifecycleCapabilities {
	return make([]LifecycleCapabilities, len(sessions))
}

// Recover runs start-up recovery over every workspace (SPEC §2.7).
func (e *Engine) Recover(ctx context.Context) (RecoveryReport, error) {
	return RecoveryReport{}, errNotImplemented
}

// ProcessOperation drives one operation as far as it can go now (dispatch, commit). Used by
// background work and recovery.
func (e *Engine) ProcessOperation(ctx context.Context, workspaceID, id string) (ForkOperation, error) {
	return ForkOperation{}, errNotImplemented
}

// Close waits for background work to finish or ctx to end.
func (e *Engine) Close(ctx context.Context) error { return nil }
