package main

import (
	"context"
	"encoding/json"
	"fmt"

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
		if err := seedMessages(ctx, e, id); err != nil {
			return err
		}
	}
	return nil
}

func seedMessages(ctx context.Context, e *forkengine.Engine, turnID string) error {
	msgs := make([]forkengine.MessageInput, messagesPerTurn)
	for j := range msgs {
		role := forkengine.RoleAssistant
		if j == 0 {
			role = forkengine.RoleUser
		}
		msgs[j] = forkengine.MessageInput{Role: role, Content: fmt.Sprintf("%s message %d", turnID, j)}
	}
	_, err := e.AppendMessages(ctx, forkengine.MessageAppend{
		WorkspaceID: workspaceID, SessionID: sourceID, TurnID: turnID, Messages: msgs,
	})
	if err != nil {
		return fmt.Errorf("seed messages of %s: %w", turnID, err)
	}
	return nil
}
