package forkenginetest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The reference's §9 scenarios that touch binding recovery, the resume check and the kill switch,
// run by an engine over the store under test, so each holds on every store. The fixture is the
// reference's: source root session "source-1" of "workspace-1", provider "codex" with provider
// session "provider-session-1"; turn-7 settled with provider turn "provider-turn-7" and binding
// {"schemaVersion":1} when it is bound.
const (
	scenarioWS       = "workspace-1"
	scenarioSource   = "source-1"
	scenarioProvider = "codex"
)

// scenarioRig is an engine over one store and a scripted driver, with a stepping clock.
type scenarioRig struct {
	t      *testing.T
	ctx    context.Context
	store  forkengine.Store
	driver *ScriptedDriver
	engine *forkengine.Engine
	now    atomic.Int64
	ids    atomic.Int64
}

func newScenarioRig(t *testing.T, s forkengine.Store, options ...func(*forkengine.Config)) *scenarioRig {
	t.Helper()
	r := &scenarioRig{t: t, ctx: context.Background(), store: s, driver: NewScriptedDriver()}
	r.now.Store(baseTime.UnixMicro())
	recovering := ScriptedDescriptor
	recovering.RecoverBinding = true
	r.driver.SetDescriptor(recovering, nil)
	cfg := forkengine.Config{
		Store: s, Drivers: map[string]forkengine.Driver{scenarioProvider: r.driver},
		Clock:  func() time.Time { return time.UnixMicro(r.now.Add(1000)).UTC() },
		NewID:  func() string { return fmt.Sprintf("id-%03d", r.ids.Add(1)) },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), NoBackground: true,
	}
	for _, o := range options {
		o(&cfg)
	}
	engine, err := forkengine.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, engine.Close(context.Background())) })
	r.engine = engine
	return r
}

// source reports S.
func (r *scenarioRig) source() forkengine.Session {
	r.t.Helper()
	psid := "provider-session-1"
	s, err := r.engine.ReportSession(r.ctx, forkengine.SessionReport{WorkspaceID: scenarioWS, ID: scenarioSource,
		Provider: scenarioProvider, ProviderSessionID: &psid, Title: strPtr("123")})
	require.NoError(r.t, err)
	return s
}

// turn reports a turn of S; bound gives it provider turn "provider-<id>" and {"schemaVersion":1}.
func (r *scenarioRig) turn(id string, phase forkengine.TurnPhase, bound bool, sub *forkengine.SubmissionReport) forkengine.Turn {
	r.t.Helper()
	in := forkengine.TurnReport{WorkspaceID: scenarioWS, SessionID: scenarioSource, ID: id, Phase: phase, Submission: sub}
	if phase == forkengine.PhaseSettled {
		in.Outcome = forkengine.OutcomeCompleted
	}
	if bound {
		in.ProviderTurnID, in.ProviderTurnBinding = strPtr("provider-"+id), json.RawMessage(`{"schemaVersion":1}`)
	}
	turn, err := r.engine.ReportTurn(r.ctx, in)
	require.NoError(r.t, err)
	return turn
}

func (r *scenarioRig) fork(requestID, turnID string) (forkengine.ForkOperation, error) {
	return r.engine.StartFork(r.ctx, forkengine.ForkInput{WorkspaceID: scenarioWS, SourceSessionID: scenarioSource,
		ThroughTurnID: turnID, RequestID: requestID})
}

func (r *scenarioRig) process(op forkengine.ForkOperation) forkengine.ForkOperation {
	r.t.Helper()
	out, err := r.engine.ProcessOperation(r.ctx, op.WorkspaceID, op.ID)
	require.NoError(r.t, err)
	return out
}

func (r *scenarioRig) storedTurn(id string) forkengine.Turn {
	r.t.Helper()
	turn, err := r.store.GetTurn(r.ctx, scenarioWS, id)
	require.NoError(r.t, err)
	return turn
}

func (r *scenarioRig) events() []forkengine.Event {
	r.t.Helper()
	events, err := r.store.EventsAfter(r.ctx, scenarioWS, 0, 100000)
	require.NoError(r.t, err)
	return events
}

func (r *scenarioRig) operations() int {
	r.t.Helper()
	n, err := r.store.CountOperations(r.ctx, scenarioWS, forkengine.OperationFilter{})
	require.NoError(r.t, err)
	return n
}

// driverCalls is every call the driver received: what "0 runtime calls" counts.
func (r *scenarioRig) driverCalls() int {
	return r.driver.DescribeCalls() + r.driver.ProbeBatches() + r.driver.RecoverCalls() + r.driver.ForkCalls() +
		r.driver.ReconcileCalls()
}

// forkable is the turn's providerForkBindingAvailable as a read answers it.
func (r *scenarioRig) forkable(turnID string) bool {
	r.t.Helper()
	s, err := r.store.GetSession(r.ctx, scenarioWS, scenarioSource)
	require.NoError(r.t, err)
	return r.engine.TurnForkability(r.ctx, []forkengine.ForkabilityQuery{{Session: s, Turn: r.storedTurn(turnID)}})[0]
}

func strPtr(s string) *string { return &s }

func requireReason(t *testing.T, err error, code forkengine.Code, reason string) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, code, forkengine.ErrorCode(err), "error: %v", err)
	require.Equal(t, reason, forkengine.ErrorReason(err), "error: %v", err)
}

// submitClaim is a submission proven by its client submit id alone.
func submitClaim(id string) *forkengine.SubmissionReport {
	return &forkengine.SubmissionReport{ClientSubmitID: id, Content: forkengine.SubmissionMultimodal}
}

// turnUpserts counts the TURN_UPSERTED events of a turn.
func turnUpserts(events []forkengine.Event, turnID string) int {
	n := 0
	for _, e := range events {
		if e.Kind == forkengine.EventTurnUpserted && e.TurnID == turnID {
			n++
		}
	}
	return n
}
