package multiinstance

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// largeMessageBytes is each message's content in the large-fork tests: three per turn, five
// turns, a transcript of over 4 MB, each message in a request of its own (under -max-body).
const largeMessageBytes = 300 << 10

// TestLargeForkOfForkAcrossInstances: a session of a few MB of transcript is forked on A, the
// fork gets a turn of its own and is forked again on B (a fork of a fork, whose History reads
// the source's rows and the child's). Both instances present both forks' transcripts alike,
// the inherited turns and messages under the same ids, and so does a new instance after A is
// killed with SIGKILL.
func TestLargeForkOfForkAcrossInstances(t *testing.T) {
	t.Parallel() // its own database (schema or file), adapter and processes
	c := newPostgresCluster(t)
	a, b := c.start("a"), c.start("b")
	before := largeForkOfFork(t, a, b)
	a.Kill()
	again := c.start("a2")
	for session, want := range before {
		if got := readTranscript(t, again, session); !reflect.DeepEqual(got, want) {
			t.Fatalf("after A was killed, a new instance presents %s as %+v, want %+v", session, got, want)
		}
	}
}

// TestLargeForkOfForkAcrossRestartSQLite is the same on one SQLite instance, restarted on its
// file after SIGKILL: a fork's inherited ids are the same before and after.
func TestLargeForkOfForkAcrossRestartSQLite(t *testing.T) {
	t.Parallel() // its own database (schema or file), adapter and processes
	c := newSQLiteCluster(t)
	a := c.start("a")
	before := largeForkOfFork(t, a, a)
	a.Kill()
	again := c.start("a2")
	for session, want := range before {
		if got := readTranscript(t, again, session); !reflect.DeepEqual(got, want) {
			t.Fatalf("after a restart %s is %+v, want %+v", session, got, want)
		}
	}
}

// largeForkOfFork builds the source "big" on first, forks it there, adds a turn to the fork and
// forks that on second; it checks both forks' transcripts on both instances and returns them.
func largeForkOfFork(t *testing.T, first, second *Instance) map[string]transcript {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := client(first).ReportSource(ctx, workspace, "big", "simulated", "", 4); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 4; i++ {
		appendLarge(ctx, t, first, "big", fmt.Sprintf("big-t%d", i))
	}
	child := forkAndAwait(ctx, t, first, "big", "big-t4", "large-1")
	if err := client(second).ReportSettledTurn(ctx, workspace, child, "child-t5"); err != nil {
		t.Fatal(err)
	}
	appendLarge(ctx, t, second, child, "child-t5")
	grand := forkAndAwait(ctx, t, second, child, "child-t5", "large-2")

	out := map[string]transcript{}
	for _, session := range []string{child, grand} {
		tr := readTranscript(t, first, session)
		if len(tr) != 5 {
			t.Fatalf("%s has %d turns, want 5", session, len(tr))
		}
		for i, turn := range tr {
			owner := fmt.Sprintf("big-t%d", i+1)
			if i == 4 {
				owner = "child-t5"
			}
			if len(turn.Messages) != 3 {
				t.Fatalf("turn %d of %s has %d messages, want 3", i+1, session, len(turn.Messages))
			}
			for j, m := range turn.Messages {
				if m.Head != fmt.Sprintf("%s message %d", owner, j) || m.Bytes != largeMessageBytes {
					t.Fatalf("message %d of turn %d of %s is %q of %d bytes, want %s's of %d", j, i+1, session, m.Head, m.Bytes, owner, largeMessageBytes)
				}
			}
		}
		if other := readTranscript(t, second, session); !reflect.DeepEqual(other, tr) {
			t.Fatalf("%s on %s is %+v, on %s %+v", session, second.Name, other, first.Name, tr)
		}
		out[session] = tr
	}
	if out[child][0].ID == out[grand][0].ID {
		t.Fatalf("the child and the grandchild present their first inherited turn under one id %s", out[child][0].ID)
	}
	return out
}

// appendLarge appends three messages of largeMessageBytes to a turn, one request each.
func appendLarge(ctx context.Context, t *testing.T, in *Instance, session, turn string) {
	t.Helper()
	for j := range 3 {
		role := "ASSISTANT"
		if j == 0 {
			role = "USER"
		}
		head := fmt.Sprintf("%s message %d", turn, j)
		content := head + " " + strings.Repeat("x", largeMessageBytes-len(head)-1)
		err := client(in).Do(ctx, `mutation($input: AppendMessagesInput!) { appendMessages(input: $input) { id } }`,
			map[string]any{"input": map[string]any{"workspaceId": workspace, "sessionId": session, "turnId": turn,
				"messages": []map[string]any{{"role": role, "content": content}}}}, nil)
		if err != nil {
			t.Fatalf("append message %d to %s: %v", j, turn, err)
		}
	}
}

// forkAndAwait forks source through turn on in and returns the committed target session.
func forkAndAwait(ctx context.Context, t *testing.T, in *Instance, source, turn, requestID string) string {
	t.Helper()
	op, err := client(in).Fork(ctx, workspace, source, turn, requestID)
	if err != nil {
		t.Fatalf("fork %s through %s: %v", source, turn, err)
	}
	op, err = client(in).AwaitOperation(ctx, workspace, op.ID, time.Minute, Operation.Terminal)
	if err != nil || op.Status != "COMMITTED" {
		t.Fatalf("fork %s through %s ended %+v (%v), want COMMITTED", source, turn, op, err)
	}
	return op.TargetSessionID
}

// transcript is a session's turns as a client reads them: ids, and of each message its id, the
// head of its content and its size (the content itself is megabytes).
type transcript []struct {
	ID       string
	Sequence int
	Messages []messageView
}

type messageView struct {
	ID, Head string
	Bytes    int
}

func readTranscript(t *testing.T, in *Instance, session string) transcript {
	t.Helper()
	var out struct {
		Session *struct {
			Turns struct {
				Edges []struct {
					Node struct {
						ID       string
						Sequence int
						Messages []struct{ ID, Content string }
					}
				}
			}
		}
	}
	err := client(in).Do(context.Background(), `query($w: ID!, $id: ID!) { session(workspaceId: $w, id: $id) {
		turns(first: 50) { edges { node { id sequence messages { id content } } } } } }`,
		map[string]any{"w": workspace, "id": session}, &out)
	if err != nil || out.Session == nil {
		t.Fatalf("read %s on %s: %v (session %v)", session, in.Name, err, out.Session)
	}
	var tr transcript
	for _, e := range out.Session.Turns.Edges {
		turn := e.Node
		var msgs []messageView
		for _, m := range turn.Messages {
			head, _, _ := strings.Cut(m.Content, " x")
			msgs = append(msgs, messageView{ID: m.ID, Head: head, Bytes: len(m.Content)})
		}
		tr = append(tr, struct {
			ID       string
			Sequence int
			Messages []messageView
		}{turn.ID, turn.Sequence, msgs})
	}
	return tr
}
