package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/forkgraph/forkgraph/forkengine"
)

// seedSource reports the source session with settled, provider-bound turns and their messages.
func seedSource(ctx context.Context, e *forkengine.Engine) error {
	ptr := func(s string) *string { return &s }
	_, err := e.ReportSession(ctx, forkengine.SessionReport{
		WorkspaceID: workspaceID, ID: sourceID, Provider: "simulated",
		ProviderSessionID: ptr("provider-source"), Title: ptr("Crash source"),
		Settings: json.RawMessage(`{"simulated":{"latencyMs":0}}`),
	})
	if err != nil {
		return fmt.Errorf("seed source session: %w", err)
	}
	for i := 1; i <= sourceTurns; i++ {
		id := fmt.Sprintf("turn-%d", i)
		_, err := e.ReportTurn(ctx, forkengine.TurnReport{
			WorkspaceID: workspaceID, SessionID: sourceID, ID: id,
			Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted,
			ProviderTurnID:      ptr("provider-" + id),
			ProviderTurnBinding: json.RawMessage(fmt.Sprintf(`{"checkpoint":%q}`, id)),
		})
		if err != nil {
			return fmt.Errorf("seed %s: %w", id, err)
		}
		if err := seedMessages(ctx, e, sourceID, id); err != nil {
			return err
		}
	}
	return nil
}

// seedMessages appends messagesPerTurn messages of messageBytes each to a turn of session: the
// transcript a fork shares is a few MB, not a few lines.
func seedMessages(ctx context.Context, e *forkengine.Engine, session, turnID string) error {
	msgs := make([]forkengine.MessageInput, messagesPerTurn)
	for j := range msgs {
		role := forkengine.RoleAssistant
		if j == 0 {
			role = forkengine.RoleUser
		}
		head := fmt.Sprintf("%s message %d ", turnID, j)
		msgs[j] = forkengine.MessageInput{Role: role, Content: head + strings.Repeat("x", messageBytes-len(head))}
	}
	_, err := e.AppendMessages(ctx, forkengine.MessageAppend{
		WorkspaceID: workspaceID, SessionID: session, TurnID: turnID, Messages: msgs,
	})
	if err != nil {
		return fmt.Errorf("seed messages of %s: %w", turnID, err)
	}
	return nil
}

// seedChild commits a fork of the source through its last turn (childID, the fork the parked
// provider_accepted operation forks again) and reports a settled turn of its own with its
// messages. It returns the operation and the ids the child presents its transcript under, as
// this process read them.
func seedChild(ctx context.Context, e *forkengine.Engine, r forkengine.Reader) (op string, turns, messages []string, err error) {
	started, err := e.StartFork(ctx, forkengine.ForkInput{WorkspaceID: workspaceID, SourceSessionID: sourceID,
		ThroughTurnID: childThrough, RequestID: "request-child", TargetSessionID: childID})
	if err != nil {
		return "", nil, nil, fmt.Errorf("start the child fork: %w", err)
	}
	done, err := e.ProcessOperation(ctx, workspaceID, started.ID)
	if err != nil || done.Status != forkengine.StatusCommitted {
		return "", nil, nil, fmt.Errorf("the child fork ended %s (%s): %v", done.Status, done.Error, err)
	}
	ptr := func(s string) *string { return &s }
	_, err = e.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: workspaceID, SessionID: childID, ID: childTurn,
		Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, ProviderTurnID: ptr("provider-" + childTurn),
		ProviderTurnBinding: json.RawMessage(fmt.Sprintf(`{"checkpoint":%q}`, childTurn))})
	if err != nil {
		return "", nil, nil, fmt.Errorf("seed %s: %w", childTurn, err)
	}
	if err := seedMessages(ctx, e, childID, childTurn); err != nil {
		return "", nil, nil, err
	}
	turns, messages, err = transcriptIDs(ctx, r, childID)
	return started.ID, turns, messages, err
}

// transcriptIDs are the ids of a session's turns and of their messages, in order.
func transcriptIDs(ctx context.Context, r forkengine.Reader, session string) (turns, messages []string, err error) {
	page, err := r.TurnsBySessionIDs(ctx, workspaceID, []string{session}, 0, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("read the turns of %s: %w", session, err)
	}
	for _, t := range page[session] {
		turns = append(turns, t.ID)
	}
	msgs, err := r.MessagesByTurnIDs(ctx, workspaceID, turns)
	if err != nil {
		return nil, nil, fmt.Errorf("read the messages of %s: %w", session, err)
	}
	for _, id := range turns {
		for _, m := range msgs[id] {
			messages = append(messages, m.ID)
		}
	}
	return turns, messages, nil
}
