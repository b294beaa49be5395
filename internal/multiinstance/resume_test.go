package multiinstance

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// resumeTurns is how many turns the writer reports through B while the subscriber moves.
const resumeTurns = 200

// TestResumeOnAnotherInstanceAfterKill: a workspaceEvents subscriber on A follows writes made
// through B; A is killed with SIGKILL mid-stream, and the subscriber resumes on C with its last
// cursor. What it received, across both subscriptions, must equal a replay of the log from its
// first cursor: nothing missed, nothing repeated.
func TestResumeOnAnotherInstanceAfterKill(t *testing.T) {
	t.Parallel() // its own database (schema or file), adapter and processes
	c := newPostgresCluster(t)
	a, b, cc := c.start("a"), c.start("b"), c.start("c")
	ctx := context.Background()
	onB := client(b)
	start, err := onB.EventCursor(ctx, workspace)
	if err != nil {
		t.Fatal(err)
	}
	f := &Follower{Workspace: workspace, After: start}
	killAt := resumeTurns / 4
	reached := make(chan error, 1) // the subscriber on A has killAt events
	ended := make(chan error, 1)   // its stream on A has ended
	subscribed := make(chan error, 1)
	go func() {
		s, err := SubscribeEvents(ctx, a.WebsocketURL(), workspace, f.After)
		subscribed <- err
		if err != nil {
			return
		}
		defer s.Close()
		_, err = f.read(ctx, s, maxEvents, streamIdle, func(Event) bool { return len(f.Events) == killAt })
		reached <- err
		if err != nil {
			return
		}
		// Keep reading what A still sends until its connection drops.
		_, err = f.read(ctx, s, maxEvents, streamIdle, SessionUpserted("end"))
		ended <- err
	}()
	if err := <-subscribed; err != nil {
		t.Fatal(err)
	}

	// Half the turns are written while the subscriber reads on A, the other half only after A is
	// dead, so the resumed stream must carry both what it missed and what comes live.
	killed := make(chan struct{})
	writeErr := make(chan error, 1)
	go func() {
		if err := writeTurns(ctx, onB, "resumer", 0, resumeTurns/2); err != nil {
			writeErr <- err
			return
		}
		<-killed
		writeErr <- writeTurns(ctx, onB, "resumer", resumeTurns/2, resumeTurns)
	}()
	if err := <-reached; err != nil {
		t.Fatalf("subscriber on A before the kill: %v", err)
	}
	a.Kill()
	if !a.Killed() {
		t.Fatal("A did not end by SIGKILL")
	}
	if err := <-ended; !errors.Is(err, ErrStreamEnded) {
		t.Fatalf("the stream on A ended with %v, want its connection lost", err)
	}
	beforeKill := len(f.Events)
	close(killed)

	if err := <-writeErr; err != nil {
		t.Fatal(err)
	}
	if err := onB.ReportSession(ctx, workspace, "end", "simulated", ""); err != nil {
		t.Fatal(err)
	}
	err = f.Follow(ctx, cc.WebsocketURL(), maxEvents, streamIdle, SessionUpserted("end"))
	if errors.Is(err, ErrStreamEnded) {
		t.Fatalf("resume on C after cursor %s: %v", f.After, err)
	} else if err != nil {
		t.Fatal(err)
	}
	replay := &Follower{Workspace: workspace, After: start}
	if err := replay.Follow(ctx, b.WebsocketURL(), maxEvents, streamIdle, SessionUpserted("end")); err != nil {
		t.Fatalf("replay on B: %v", err)
	}
	t.Logf("%d events on A before the kill, %d in all after resuming on C", beforeKill, len(f.Events))
	sameEvents(t, "subscriber resumed on C", f.Events, replay.Events)
	if got := len(replay.Events); got != resumeTurns+2 {
		t.Errorf("replay holds %d events, want %d (a session, its turns, the end marker)", got, resumeTurns+2)
	}
}

// writeTurns reports settled turns from to to-1 of session, one after another, and the session
// itself first when from is 0.
func writeTurns(ctx context.Context, api *Client, session string, from, to int) error {
	if from == 0 {
		if err := api.ReportSession(ctx, workspace, session, "simulated", ""); err != nil {
			return err
		}
	}
	for i := from; i < to; i++ {
		if err := api.ReportSettledTurn(ctx, workspace, session, fmt.Sprintf("%s-t%d", session, i)); err != nil {
			return fmt.Errorf("turn %d: %w", i, err)
		}
	}
	return nil
}
