package forkengine_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// The fixture follows the reference's scenarios: source session "source-1" of workspace "ws-1",
// provider "scripted" with provider session "provider-session-1", titled "123", with settled,
// provider-bound turns turn-1..turn-N (provider turn "provider-turn-<i>") of two messages each.
const (
	ws       = "ws-1"
	source   = "source-1"
	provider = "scripted"
)

var baseTime = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// newTestStore returns the store a harness runs on. It is a variable so the same suite can be
// pointed at another Store implementation from a file that is not part of this package's build.
var newTestStore = func(*testing.T) forkengine.Store { return forkenginetest.NewMemStore() }

// harness is one engine over a MemStore and a ScriptedDriver, with a stepping clock (every
// reading is one millisecond after the previous one) and counting ids, so runs are reproducible.
type harness struct {
	t      *testing.T
	ctx    context.Context
	store  forkengine.Store
	driver *forkenginetest.ScriptedDriver
	broker *forkengine.Broker
	engine *forkengine.Engine

	mu     sync.Mutex
	now    time.Time
	nextID int
}

// newHarness builds the engine with NoBackground unless an option turns it back on; options edit
// the Config before New.
func newHarness(t *testing.T, options ...func(*forkengine.Config)) *harness {
	t.Helper()
	h := &harness{t: t, ctx: context.Background(), store: newTestStore(t),
		driver: forkenginetest.NewScriptedDriver(), broker: forkengine.NewBroker(4096), now: baseTime}
	cfg := forkengine.Config{
		Store:        h.store,
		Drivers:      map[string]forkengine.Driver{provider: h.driver},
		Publisher:    h.broker,
		Clock:        h.clock,
		NewID:        h.id,
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		NoBackground: true,
	}
	for _, o := range options {
		o(&cfg)
	}
	engine, err := forkengine.New(cfg)
	require.NoError(t, err)
	h.engine = engine
	t.Cleanup(func() { require.NoError(t, engine.Close(context.Background())) })
	return h
}

func withBackground(cfg *forkengine.Config) { cfg.NoBackground = false }
func withoutBarrier(cfg *forkengine.Config) { cfg.DisableBarrier = true }

func (h *harness) clock() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now = h.now.Add(time.Millisecond)
	return h.now
}

func (h *harness) id() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nextID++
	return fmt.Sprintf("id-%03d", h.nextID)
}

func ptr[T any](v T) *T { return &v }

// session reports a root session of the scripted provider.
func (h *harness) session(id, providerSessionID, title string) forkengine.Session {
	h.t.Helper()
	s, err := h.engine.ReportSession(h.ctx, forkengine.SessionReport{
		WorkspaceID: ws, ID: id, Provider: provider, ProviderSessionID: ptr(providerSessionID),
		Title: ptr(title), RailSectionKey: ptr("conversations"), RailProjectPath: ptr("/projects/app"),
		Cwd: ptr("/project"), Model: ptr("model-1"),
		Settings: json.RawMessage(`{"model":"model-1"}`),
	})
	require.NoError(h.t, err)
	return s
}

// turn reports a turn in the given phase; a settled turn completes and gets a provider binding.
func (h *harness) turn(sessionID, id string, phase forkengine.TurnPhase) forkengine.Turn {
	h.t.Helper()
	in := forkengine.TurnReport{WorkspaceID: ws, SessionID: sessionID, ID: id, Phase: phase}
	if phase == forkengine.PhaseSettled {
		in.Outcome = forkengine.OutcomeCompleted
		in.ProviderTurnID = ptr("provider-" + id)
		in.ProviderTurnBinding = json.RawMessage(`{"schemaVersion":1}`)
	}
	turn, err := h.engine.ReportTurn(h.ctx, in)
	require.NoError(h.t, err)
	return turn
}

// rewriteSession changes a stored session behind the engine, for the tests of what a report may
// no longer do (a session keeps its provider session once set): the checks that guard against
// such a change still have to hold for a database written by an older forkgraph.
func (h *harness) rewriteSession(id string, change func(*forkengine.Session)) {
	h.t.Helper()
	s, err := h.store.GetSession(h.ctx, ws, id)
	require.NoError(h.t, err)
	change(&s)
	require.NoError(h.t, h.store.Update(h.ctx, func(tx forkengine.Tx) error { return tx.UpsertSession(h.ctx, s) }))
}

// rewriteTurn changes a stored turn behind the engine (a bound turn keeps its binding through
// reports).
func (h *harness) rewriteTurn(id string, change func(*forkengine.Turn)) {
	h.t.Helper()
	turn, err := h.store.GetTurn(h.ctx, ws, id)
	require.NoError(h.t, err)
	change(&turn)
	require.NoError(h.t, h.store.Update(h.ctx, func(tx forkengine.Tx) error { return tx.UpsertTurn(h.ctx, turn) }))
}

// messages appends a user prompt and an assistant answer to a turn.
func (h *harness) messages(sessionID, turnID string) []forkengine.Message {
	h.t.Helper()
	msgs, err := h.engine.AppendMessages(h.ctx, forkengine.MessageAppend{
		WorkspaceID: ws, SessionID: sessionID, TurnID: turnID, Messages: []forkengine.MessageInput{
			{ID: "msg-" + turnID + "-user", Role: forkengine.RoleUser, Content: "prompt of " + turnID},
			{ID: "msg-" + turnID + "-assistant", Role: forkengine.RoleAssistant, Content: "answer of " + turnID},
		}})
	require.NoError(h.t, err)
	return msgs
}

// seed creates the fixture source with n settled, bound turns.
func (h *harness) seed(n int) {
	h.t.Helper()
	h.session(source, "provider-session-1", "123")
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("turn-%d", i)
		h.turn(source, id, forkengine.PhaseSettled)
		h.messages(source, id)
	}
}

// fork starts a fork of the source through turnID with the given request id and a derived target.
func (h *harness) fork(requestID, turnID string) (forkengine.ForkOperation, error) {
	return h.engine.StartFork(h.ctx, forkengine.ForkInput{
		WorkspaceID: ws, SourceSessionID: source, ThroughTurnID: turnID, RequestID: requestID,
	})
}

// mustFork starts a fork that must be accepted.
func (h *harness) mustFork(requestID, turnID string) forkengine.ForkOperation {
	h.t.Helper()
	op, err := h.fork(requestID, turnID)
	require.NoError(h.t, err)
	return op
}

// process drives an operation as far as it goes and returns it.
func (h *harness) process(op forkengine.ForkOperation) forkengine.ForkOperation {
	h.t.Helper()
	out, err := h.engine.ProcessOperation(h.ctx, op.WorkspaceID, op.ID)
	require.NoError(h.t, err)
	return out
}

// forkAndProcess starts a fork and drives it to its outcome.
func (h *harness) forkAndProcess(requestID, turnID string) forkengine.ForkOperation {
	h.t.Helper()
	return h.process(h.mustFork(requestID, turnID))
}

// stored reads an operation straight from the store (no commit-on-read).
func (h *harness) stored(id string) forkengine.ForkOperation {
	h.t.Helper()
	op, err := h.store.GetOperation(h.ctx, ws, id)
	require.NoError(h.t, err)
	return op
}

// operations counts the operations of the workspace.
func (h *harness) operations() int {
	h.t.Helper()
	n, err := h.store.CountOperations(h.ctx, ws, forkengine.OperationFilter{})
	require.NoError(h.t, err)
	return n
}

// requireCode asserts err carries the domain code and, when given, the reason.
func requireCode(t *testing.T, err error, code forkengine.Code, reason string) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, code, forkengine.ErrorCode(err), "error: %v", err)
	require.Equal(t, reason, forkengine.ErrorReason(err), "error: %v", err)
}

func sortByPosition(msgs []forkengine.Message) {
	slices.SortFunc(msgs, func(a, b forkengine.Message) int { return cmp.Compare(a.Position, b.Position) })
}

func forkengineMemStore() *forkenginetest.MemStore { return forkenginetest.NewMemStore() }
