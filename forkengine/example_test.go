package forkengine_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// Example walks through one fork: an agent runtime reports a session with a finished turn, a
// client forks through that turn, the engine dispatches the fork to the provider driver and
// commits the new session, and the client acknowledges it.
func Example() {
	ctx := context.Background()
	engine, err := forkengine.New(forkengine.Config{
		Store:   forkenginetest.NewMemStore(),
		Drivers: map[string]forkengine.Driver{"scripted": forkenginetest.NewScriptedDriver()},
	})
	if err != nil {
		panic(err)
	}
	defer engine.Close(ctx)

	// 1. The runtime reports a conversation and one settled turn the provider can resume.
	ptr := func(s string) *string { return &s }
	_, err = engine.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "demo", ID: "chat-1",
		Provider: "scripted", ProviderSessionID: ptr("thread-1"), Title: ptr("Refactor the parser")})
	must(err)
	_, err = engine.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "demo", SessionID: "chat-1", ID: "turn-1",
		Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted,
		ProviderTurnID: ptr("thread-1/turn-1"), ProviderTurnBinding: json.RawMessage(`{"checkpoint":"c1"}`)})
	must(err)
	_, err = engine.AppendMessages(ctx, forkengine.MessageAppend{WorkspaceID: "demo", SessionID: "chat-1", TurnID: "turn-1",
		Messages: []forkengine.MessageInput{
			{Role: forkengine.RoleUser, Content: "Split the parser into a lexer and a parser."},
			{Role: forkengine.RoleAssistant, Content: "Done: lexer.go and parser.go."},
		}})
	must(err)

	// 2. A client forks through turn-1. The answer comes at once; the fork runs in the background.
	op, err := engine.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "demo", SourceSessionID: "chat-1",
		ThroughTurnID: "turn-1", RequestID: "click-42", TargetSessionID: "chat-2"})
	must(err)
	status, phase := op.Status.Public()
	fmt.Println("started:", status, phase)

	// 3. Close waits for the background work; the operation is now committed.
	must(engine.Close(ctx))
	op, err = engine.Operation(ctx, "demo", op.ID)
	must(err)
	status, phase = op.Status.Public()
	fmt.Println("finished:", status, phase)

	session, lineage, err := engine.CommittedResult(ctx, op)
	must(err)
	fmt.Printf("new session %s %q forked from %s through %s\n", session.ID, session.Title,
		lineage.SourceSessionID, lineage.SourceTurnID)

	// 4. The client confirms it adopted the new session, which releases the turn for new forks.
	op, err = engine.Acknowledge(ctx, "demo", op.ID, "")
	must(err)
	fmt.Println("acknowledged:", op.Acknowledged())

	// Output:
	// started: accepted frozen
	// finished: committed committed
	// new session chat-2 "Refactor the parser (2)" forked from chat-1 through turn-1
	// acknowledged: true
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
