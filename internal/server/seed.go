package server

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// demoWorkspace is the workspace seeded on first start, so the first fork works at once.
const demoWorkspace = "demo"

// seedTimeout bounds the wait for the seeded fork to commit.
const seedTimeout = 30 * time.Second

type seedSession struct {
	id, title string
	settings  string
	turns     [][2]string // user prompt, assistant answer
}

var demoSessions = []seedSession{
	{id: "lisbon-trip", title: "Plan a weekend in Lisbon", turns: [][2]string{
		{"Plan a weekend in Lisbon for two.", "Day 1: Alfama and the castle; day 2: Belém and LX Factory."},
		{"We prefer museums over walking tours.", "Swap the walking tour for the Gulbenkian and MAAT."},
		{"Add a dinner with fado on Saturday.", "Suggestion: dinner at Clube de Fado, 21:00."},
	}},
	{id: "billing-refactor", title: "Refactor the billing module", turns: [][2]string{
		{"Split invoice.go into smaller files.", "Proposed: invoice_totals.go, invoice_tax.go, invoice_pdf.go."},
		{"Keep the public API unchanged.", "Done: only unexported helpers moved; tests pass."},
	}},
	{id: "refusing-provider", title: "A provider that refuses forks",
		settings: `{"simulated":{"fork":"rejected","error":"the provider refused to fork (scripted by settings.simulated)"}}`,
		turns: [][2]string{
			{"Summarise the incident report.", "Root cause: an expired certificate on the edge proxy."},
			{"Draft the customer email.", "Draft ready: apology, timeline, and the renewal automation."},
		}},
	// Two forks whose delivery is lost (DELIVERY_UNKNOWN), to try reconcile and abandon: the
	// provider never tells what became of the first; it finds the second's child on the second ask.
	{id: "lost-answer", title: "A fork whose answer is lost",
		settings: `{"simulated":{"fork":"unknown","reconcile":"unknown","error":"the provider's answer was lost (scripted by settings.simulated)"}}`,
		turns: [][2]string{
			{"List the flaky tests of last week.", "Three: TestUpload, TestRetryBudget and TestLeaseExpiry."},
		}},
	{id: "late-answer", title: "A fork found on the second ask",
		settings: `{"simulated":{"fork":"unknown","reconcileAfter":1,"error":"the provider's answer was lost (scripted by settings.simulated)"}}`,
		turns: [][2]string{
			{"Translate the release notes into German.", "Fertig: die Versionshinweise liegen auf Deutsch vor."},
		}},
}

// seedDemo creates the demo workspace on first start: a few sessions with settled, bound turns and
// their messages, and one committed (and acknowledged) fork unless forking is switched off. A
// workspace that already has
// sessions is left alone, so restarts never duplicate or undo anything.
func seedDemo(ctx context.Context, engine *forkengine.Engine) error {
	n, err := engine.Reader().CountSessions(ctx, demoWorkspace, forkengine.SessionFilter{IncludeDeleted: true})
	if err != nil || n > 0 {
		return err
	}
	for _, s := range demoSessions {
		if err := seedSessionHistory(ctx, engine, s); err != nil {
			return err
		}
	}
	if state, err := engine.Forking(ctx, demoWorkspace); err != nil || !state.Enabled() {
		return err // forking is off (-forking=false): the demo has no fork of its own, the rest is there
	}
	return seedFork(ctx, engine)
}

func seedSessionHistory(ctx context.Context, engine *forkengine.Engine, s seedSession) error {
	providerSessionID, title := "sim-"+s.id, s.title
	report := forkengine.SessionReport{
		WorkspaceID: demoWorkspace, ID: s.id, Provider: "simulated",
		ProviderSessionID: &providerSessionID, Title: &title,
	}
	if s.settings != "" {
		report.Settings = json.RawMessage(s.settings)
	}
	if _, err := engine.ReportSession(ctx, report); err != nil {
		return fmt.Errorf("session %s: %w", s.id, err)
	}
	for i, exchange := range s.turns {
		turnID := fmt.Sprintf("%s-t%d", s.id, i+1)
		providerTurnID := "sim-" + turnID
		if _, err := engine.ReportTurn(ctx, forkengine.TurnReport{
			WorkspaceID: demoWorkspace, SessionID: s.id, ID: turnID,
			Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted,
			ProviderTurnID: &providerTurnID, ProviderTurnBinding: json.RawMessage(fmt.Sprintf(`{"turn":%d}`, i+1)),
		}); err != nil {
			return fmt.Errorf("turn %s: %w", turnID, err)
		}
		if _, err := engine.AppendMessages(ctx, forkengine.MessageAppend{
			WorkspaceID: demoWorkspace, SessionID: s.id, TurnID: turnID, Messages: []forkengine.MessageInput{
				{ID: turnID + "-user", Role: forkengine.RoleUser, Content: exchange[0]},
				{ID: turnID + "-assistant", Role: forkengine.RoleAssistant, Content: exchange[1]},
			},
		}); err != nil {
			return fmt.Errorf("messages of %s: %w", turnID, err)
		}
	}
	return nil
}

// seedFork forks the first session through its second turn, waits for the commit and
// acknowledges it, so the boundary is free for the visitor's own first fork.
func seedFork(ctx context.Context, engine *forkengine.Engine) error {
	ctx, cancel := context.WithTimeout(ctx, seedTimeout)
	defer cancel()
	op, err := engine.StartFork(ctx, forkengine.ForkInput{
		WorkspaceID: demoWorkspace, SourceSessionID: "lisbon-trip", ThroughTurnID: "lisbon-trip-t2",
		RequestID: "seed-fork-1", TargetSessionID: "lisbon-trip-museums",
	})
	if err != nil {
		return fmt.Errorf("start seed fork: %w", err)
	}
	// The operation's stream starts with its state now, so a fork that ended before it was
	// followed is seen too, and completes after a terminal status.
	s, err := engine.FollowOperation(ctx, demoWorkspace, op.ID)
	if err != nil {
		return fmt.Errorf("follow seed fork %s: %w", op.ID, err)
	}
	for next := range s.C {
		op = next
	}
	if !op.Status.Terminal() {
		if err := s.Err(); err != nil {
			return fmt.Errorf("seed fork %s: %w", op.ID, err)
		}
		return fmt.Errorf("seed fork %s did not finish: %w", op.ID, ctx.Err())
	}
	if op.Status != forkengine.StatusCommitted {
		return fmt.Errorf("seed fork %s ended %s", op.ID, op.Status)
	}
	_, err = engine.Acknowledge(ctx, demoWorkspace, op.ID, "")
	return err
}
